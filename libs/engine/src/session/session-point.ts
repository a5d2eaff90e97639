// Where a session falls in [0, 1), the same on every replica, after any restart or Redis flush:
// the first 32 bits of SHA-256 over the parts joined by NUL, divided by 2^32. The holdout arm and
// the shadow sample both draw sessions with it, from different parts (the shadow's start with
// `shadow`), so whether a session is sampled is independent of its arm.
import { createHash } from 'node:crypto';

export function sessionPoint(...parts: readonly string[]): number {
  return createHash('sha256').update(parts.join('\u0000')).digest().readUInt32BE(0) / 2 ** 32;
}

/** A session key as traces and holdout figures name it: not the key itself, the same on every replica. */
export function sessionHash(session: string): string {
  return createHash('sha256').update(session).digest('hex').slice(0, 16);
}
