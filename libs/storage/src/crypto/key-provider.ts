// The key-encryption key (KEK) only ever wraps and unwraps data keys: a KMS fits behind the same
// two calls. The local provider holds the KEK in process memory, read from CG_ENCRYPTION_KEY (a
// Kubernetes Secret) or, on a laptop, from a file generated into the data directory on first run.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { StorageError } from '../storage-errors';

export interface KeyProvider {
  /** Names the current KEK (stored beside each wrapped key, so a rotation knows what to rewrap). */
  readonly keyId: string;
  /** Wraps a data key for one scope (the scope is authenticated: a wrapped key cannot be moved). */
  wrap(dataKey: Buffer, scope: string): Promise<Buffer>;
  /** Unwraps with whichever known KEK wrapped it; throws `encryption_key_mismatch` when none did. */
  unwrap(wrapped: Buffer, scope: string, keyId: string): Promise<Buffer>;
}

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A short public name of a KEK: it reveals nothing about the key and tells two keys apart. */
function kekId(kek: Buffer): string {
  return createHash('sha256').update('cg kek id').update(kek).digest('hex').slice(0, 12);
}

export class LocalKeyProvider implements KeyProvider {
  readonly keyId: string;
  private readonly keks = new Map<string, Buffer>();

  /** `current` wraps; `previous` KEKs only unwrap (a rotation in progress). */
  constructor(current: Buffer, previous: readonly Buffer[] = []) {
    for (const k of [current, ...previous]) {
      if (k.length !== KEY_BYTES) throw new StorageError('encryption_key_invalid', `an encryption key must be ${KEY_BYTES} bytes`);
      this.keks.set(kekId(k), k);
    }
    this.keyId = kekId(current);
  }

  async wrap(dataKey: Buffer, scope: string): Promise<Buffer> {
    const iv = randomBytes(IV_BYTES);
    const c = createCipheriv('aes-256-gcm', this.kek(this.keyId), iv);
    c.setAAD(Buffer.from(scope));
    const body = Buffer.concat([c.update(dataKey), c.final()]);
    return Buffer.concat([iv, c.getAuthTag(), body]);
  }

  async unwrap(wrapped: Buffer, scope: string, keyId: string): Promise<Buffer> {
    const kek = this.keks.get(keyId);
    if (!kek) {
      throw new StorageError(
        'encryption_key_mismatch',
        `the data key of ${scope} was wrapped by encryption key ${keyId}, and this process has ${[...this.keks.keys()].join(', ')}: ` +
          'every replica (gateway and admin) needs the same CG_ENCRYPTION_KEY (during a rotation, the old one in CG_ENCRYPTION_KEY_PREVIOUS)',
      );
    }
    try {
      const d = createDecipheriv('aes-256-gcm', kek, wrapped.subarray(0, IV_BYTES));
      d.setAAD(Buffer.from(scope));
      d.setAuthTag(wrapped.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([d.update(wrapped.subarray(IV_BYTES + TAG_BYTES)), d.final()]);
    } catch (err) {
      throw new StorageError('encryption_key_mismatch', `the data key of ${scope} does not unwrap with encryption key ${keyId}`, {
        cause: err,
      });
    }
  }

  private kek(id: string): Buffer {
    const k = this.keks.get(id);
    if (!k) throw new StorageError('encryption_key_mismatch', `no encryption key ${id}`);
    return k;
  }
}

/** A KEK as written in the environment: 32 bytes in base64 (`openssl rand -base64 32`) or 64 hex. */
export function parseKek(name: string, value: string): Buffer {
  const v = value.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(v) ? Buffer.from(v, 'hex') : Buffer.from(v, 'base64');
  if (key.length !== KEY_BYTES || (!/^[0-9a-fA-F]{64}$/.test(v) && key.toString('base64') !== v)) {
    throw new StorageError(
      'encryption_key_invalid',
      `${name} must be ${KEY_BYTES} bytes in base64 (openssl rand -base64 32) or 64 hex digits`,
    );
  }
  return key;
}

export const KEY_FILE = 'encryption.key';

/**
 * The laptop's KEK: `dataDir/encryption.key`, created on first run with mode 0600 (owner only).
 * A file others may read is refused: the key would be as exposed as the database beside it.
 */
export function dataDirKek(dataDir: string): Buffer {
  const path = join(dataDir, KEY_FILE);
  mkdirSync(dirname(path), { recursive: true });
  try {
    writeFileSync(path, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
    chmodSync(path, 0o600); // the umask may have narrowed nothing, but never widened
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  if ((statSync(path).mode & 0o077) !== 0) {
    throw new StorageError(
      'encryption_key_invalid',
      `${path} is readable by others: chmod 600 it (it holds the key of every stored original)`,
    );
  }
  return parseKek(path, readFileSync(path, 'utf8'));
}

export interface KekSource {
  /** CG_ENCRYPTION_KEY. */
  key?: string;
  /** CG_ENCRYPTION_KEY_PREVIOUS: older KEKs, comma-separated, that still unwrap during a rotation. */
  previous?: string;
  /** CG_ENCRYPTION_KEY_REQUIRED: a server refuses to start without the key instead of generating one. */
  required?: boolean;
  dataDir: string;
}

/** Reads its key on first use: a process that never stores anything needs no key file. */
export class DeferredKeyProvider implements KeyProvider {
  private loaded: KeyProvider | undefined;
  constructor(private readonly load: () => KeyProvider) {}

  get keyId(): string {
    return this.provider().keyId;
  }

  async wrap(dataKey: Buffer, scope: string): Promise<Buffer> {
    return this.provider().wrap(dataKey, scope);
  }

  async unwrap(wrapped: Buffer, scope: string, keyId: string): Promise<Buffer> {
    return this.provider().unwrap(wrapped, scope, keyId);
  }

  private provider(): KeyProvider {
    this.loaded ??= this.load();
    return this.loaded;
  }
}

export function localKeyProvider(s: KekSource): LocalKeyProvider {
  const previous = (s.previous ?? '')
    .split(',')
    .filter((v) => v.trim() !== '')
    .map((v) => parseKek('CG_ENCRYPTION_KEY_PREVIOUS', v));
  if (s.key) return new LocalKeyProvider(parseKek('CG_ENCRYPTION_KEY', s.key), previous);
  if (s.required) {
    throw new StorageError(
      'encryption_key_missing',
      'CG_ENCRYPTION_KEY is required (CG_ENCRYPTION_KEY_REQUIRED=true): put 32 random bytes in base64 (openssl rand -base64 32) ' +
        'in the Secret the chart reads (secrets.keys.encryptionKey); every gateway and admin replica must have the same one',
    );
  }
  return new LocalKeyProvider(dataDirKek(s.dataDir), previous);
}
