// What makes the audit chain hold against someone who can write the database: each row's hash is
// an HMAC under a key the database does not hold (derived from the `audit` scope's data key, which
// only the KEK unwraps), and the head is also recorded outside the database (the anchor), so a
// wiped or rewound log does not verify either.
import { createHmac } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { KeyRing } from '../crypto/keyring';
import type { SqlClient } from '../sql/sql-client';
import { openRedis, type RedisClient, type RedisEndpoint } from '../redis/redis-connection';

export interface AnchoredHead {
  id: number;
  hash: string;
  rows: number;
}

/** The head as last known outside the database; only ever moves forward. */
export interface AuditAnchor {
  read(): Promise<AnchoredHead | null>;
  advance(head: AnchoredHead): Promise<void>;
}

export interface AuditSeal {
  /** The hash of a keyed row: `h1:` + HMAC-SHA256 hex of its canonical body. */
  mac(body: string): string;
  anchor?: AuditAnchor;
}

export const KEYED_PREFIX = 'h1:';
export const AUDIT_SCOPE = 'audit';

export async function auditSeal(keys: KeyRing, anchor?: AuditAnchor): Promise<AuditSeal> {
  const key = (await keys.forScope(AUDIT_SCOPE)).macKey('audit chain');
  return { mac: (body) => `${KEYED_PREFIX}${createHmac('sha256', key).update(body).digest('hex')}`, anchor };
}

/** `rows:id:hash`, MAC'd so a hand-edited anchor is not believed. */
function encode(seal: Pick<AuditSeal, 'mac'>, h: AnchoredHead): string {
  const body = `${h.rows}:${h.id}:${h.hash}`;
  return `${body}|${seal.mac(`anchor ${body}`)}`;
}

function decode(seal: Pick<AuditSeal, 'mac'>, raw: string | null): AnchoredHead | null {
  if (!raw) return null;
  const [body = '', mac] = raw.trim().split('|');
  if (mac !== seal.mac(`anchor ${body}`)) throw new Error('the audit anchor does not verify (edited outside the gateway)');
  const [rows, id, ...hash] = body.split(':');
  return { rows: Number(rows), id: Number(id), hash: hash.join(':') };
}

/** The laptop's anchor: a file beside the key (DATA_DIR/audit-anchor), written atomically. */
export class FileAuditAnchor implements AuditAnchor {
  constructor(
    private readonly path: string,
    private readonly seal: Pick<AuditSeal, 'mac'>,
  ) {}

  read(): Promise<AnchoredHead | null> {
    let raw: string | null = null;
    try {
      raw = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return Promise.resolve(decode(this.seal, raw));
  }

  async advance(head: AnchoredHead): Promise<void> {
    const have = await this.read();
    if (have && have.rows >= head.rows) return;
    mkdirSync(dirname(this.path), { recursive: true });
    writeFileSync(`${this.path}.tmp`, encode(this.seal, head), { mode: 0o600 });
    renameSync(`${this.path}.tmp`, this.path);
  }
}

/** Keeps the greater head: replicas appending at once never move the anchor back. */
const ADVANCE = `
local cur = redis.call('GET', KEYS[1])
if cur then
  local rows = tonumber(string.match(cur, '^(%d+):'))
  if rows and rows >= tonumber(ARGV[1]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`;

/** The server's anchor: one Redis key (another system than the database it vouches for). */
export class RedisAuditAnchor implements AuditAnchor {
  constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
    private readonly seal: Pick<AuditSeal, 'mac'>,
  ) {}

  static open(url: RedisEndpoint, prefix: string, seal: Pick<AuditSeal, 'mac'>): RedisAuditAnchor {
    return new RedisAuditAnchor(openRedis(url, { maxRetriesPerRequest: 1 }), `${prefix}audit:anchor`, seal);
  }

  close(): void {
    this.redis.disconnect();
  }

  async read(): Promise<AnchoredHead | null> {
    return decode(this.seal, await this.redis.get(this.key));
  }

  async advance(head: AnchoredHead): Promise<void> {
    await this.redis.eval(ADVANCE, 1, this.key, head.rows, encode(this.seal, head));
  }
}

export interface AuditSealing {
  /** The seal, made on first use (the database may not be migrated at boot); the chain sealed then. */
  get(): Promise<AuditSeal>;
  close(): void;
}

/**
 * The admin's seal: the `audit` key from the ring, the anchor in Redis when there is one, else a
 * file in the data directory. The first use also seals a chain that ends unkeyed (sealAuditChain).
 */
export function auditSealing(
  keys: KeyRing,
  sql: SqlClient,
  where: { redisUrl?: RedisEndpoint; redisPrefix?: string; dataDir: string },
  sealChain: (sql: SqlClient, seal: AuditSeal) => Promise<void>,
): AuditSealing {
  let made: Promise<AuditSeal> | undefined;
  let redis: RedisAuditAnchor | undefined;
  return {
    get() {
      made ??= (async () => {
        const seal = await auditSeal(keys);
        if (where.redisUrl) seal.anchor = redis = RedisAuditAnchor.open(where.redisUrl, where.redisPrefix ?? 'cg:', seal);
        else seal.anchor = new FileAuditAnchor(join(where.dataDir, 'audit-anchor'), seal);
        await sealChain(sql, seal);
        return seal;
      })();
      made.catch(() => (made = undefined));
      return made;
    },
    close() {
      redis?.close();
    },
  };
}
