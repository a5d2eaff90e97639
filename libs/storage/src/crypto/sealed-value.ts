// The at-rest form of an original or a frozen replacement: AES-256-GCM under a tenant's data key,
// bound to where it is stored (the AAD names tenant and key), so a value copied to another tenant,
// id or session does not open. Text so every adapter stores it as it stores plaintext today.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { StorageError } from '../storage-errors';

/**
 * U+001F cannot be typed and no tool output starts with it in practice; Postgres text holds it
 * (unlike NUL). A value without the prefix was written before sealing existed (read as is).
 */
const PREFIX = '\u001fcg1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/** `PREFIX <version> : base64(iv ‖ tag ‖ ciphertext)`. */
export function sealText(key: Buffer, version: number, plain: string, aad: string): string {
  const iv = randomBytes(IV_BYTES);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(aad));
  const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return `${PREFIX}${version}:${Buffer.concat([iv, c.getAuthTag(), body]).toString('base64')}`;
}

/**
 * The UTF-8 bytes of a sealed `plainBytes`-byte value under a one-digit key version (a later
 * version adds a digit): what the archive's byte budget expects a value to take before it is sealed.
 */
export function sealedLength(plainBytes: number): number {
  return Buffer.byteLength(PREFIX) + 2 + 4 * Math.ceil((IV_BYTES + TAG_BYTES + plainBytes) / 3);
}

/** The data-key version a sealed value names (NaN for a value that is not sealed). */
export function sealedVersion(stored: string): number {
  if (!isSealed(stored)) return Number.NaN;
  return Number(stored.slice(PREFIX.length, stored.indexOf(':', PREFIX.length)));
}

/** Opens a sealed value; throws `sealed_value_invalid` when it was altered or moved. */
export function openText(key: Buffer, stored: string, aad: string): string {
  const raw = Buffer.from(stored.slice(stored.indexOf(':', PREFIX.length) + 1), 'base64');
  if (raw.length < IV_BYTES + TAG_BYTES) throw invalid(aad);
  try {
    const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    d.setAAD(Buffer.from(aad));
    d.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([d.update(raw.subarray(IV_BYTES + TAG_BYTES)), d.final()]).toString('utf8');
  } catch (err) {
    throw invalid(aad, err);
  }
}

function invalid(aad: string, cause?: unknown): StorageError {
  return new StorageError('sealed_value_invalid', `a sealed value (${aad}) does not open with its tenant's key`, { cause });
}

/** What a sealed value is bound to besides its tenant: a stash id, a session's slot. */
export const stashAad = (id: string): string => `s:${id}`;
export const frozenAad = (session: string, slot: string): string => `frz:${session}:${slot}`;

/** Stash entries with their text sealed under the tenant's current key. */
export function sealEntries<E extends { id: string; text: string }>(
  k: { seal(plain: string, aad: string): string },
  entries: readonly E[],
): E[] {
  return entries.map((e) => ({ ...e, text: k.seal(e.text, stashAad(e.id)) }));
}
