// What a test compares of the bodies the gateway forwarded: each message's raw bytes, the prompt's
// head, and the marker ids, as the provider's cache key and the expand tool see them.
import type { MarkerIdSource } from '@context-guru/components';
import { KeyRing, LocalKeyProvider, PgSqlClient, SqlDataKeyStore } from '@context-guru/storage';
import { RawIndex } from '../../libs/engine/src/wire/raw-index';

export const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/g;

/** Raw bytes of each element of a body's `messages`. */
export function rawMessages(raw: string): string[] {
  const index = new RawIndex(raw);
  const out: string[] = [];
  for (let i = 0; i < index.messageCount(); i++) {
    const s = index.message(i);
    if (s) out.push(raw.slice(s.start, s.end));
  }
  return out;
}

/** A message's bytes as the provider's cache key sees them: the client moves its breakpoint every turn. */
export const withoutBreakpoints = (raw: string): string => raw.replace(/,"cache_control":\{"type":"ephemeral"\}/g, '');

/** Raw bytes of the prompt's head: `tools` and `system`. */
export function head(raw: string): string {
  const index = new RawIndex(raw);
  return ['tools', 'system']
    .map((k) => {
      const span = index.topLevel(k);
      return span ? raw.slice(span.start, span.end) : '';
    })
    .join('\u0000');
}

/** The marker ids a forwarded body's messages carry (the expand tool's description names none). */
export function markerIds(raw: string): Set<string> {
  return new Set([...rawMessages(raw).join('\n').matchAll(MARKER)].map((m) => m[1] ?? ''));
}

/** The marker id a deployment gives an original in a tenant: keyed by its key ring (docs/security.md). */
export async function markerIdOf(keys: MarkerIdSource | undefined, original: string, tenant = 'default'): Promise<string> {
  if (!keys) throw new Error('this gateway has no key ring (a store handed in by the test): its ids are unkeyed');
  return (await keys.idsFor(tenant))(original);
}

/** The key ring of gateway processes on `databaseUrl` with CG_ENCRYPTION_KEY `kek` (base64), read from outside. */
export function deploymentKeys(databaseUrl: string, kek: string): { keys: KeyRing; close(): Promise<void> } {
  const sql = new PgSqlClient({ connectionString: databaseUrl });
  return { keys: new KeyRing(new LocalKeyProvider(Buffer.from(kek, 'base64')), new SqlDataKeyStore(sql)), close: () => sql.close() };
}
