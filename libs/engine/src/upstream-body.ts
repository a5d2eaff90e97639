// The bytes a prepared body goes upstream as. The route hands undici bytes, never a string: undici
// would UTF-8-encode a string on its way out, and that encoding is part of what the gateway adds
// to a request — the overhead bench counts it by calling this same function.
import type { Prepared } from './prepare-request';

/** One buffer, or chunks sent one after another (never concatenated). */
export type UpstreamBytes = Buffer | readonly Buffer[];

/**
 * The bytes the preparation produced; else an unchanged body goes out as the very bytes that came
 * in (the same string object: a content comparison of two ropes would copy both), a rewritten one
 * encoded here.
 */
export function upstreamBytes(prepared: Prepared, raw: string, inbound: Buffer): UpstreamBytes {
  if (prepared.encoded) return prepared.encoded;
  if (prepared.outgoing === raw) return inbound;
  return Buffer.from(prepared.outgoing, 'utf8');
}
