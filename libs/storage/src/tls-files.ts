// TLS to Redis and Postgres with a private CA: the PEM files the variables name are read once at
// boot (a missing or unreadable one is a boot error naming its variable, never a connection that
// fails later), and a server whose certificate the CA does not verify is told apart from one that
// does not answer, so a boot fails on it at once instead of waiting for an answer that cannot come.
import { readFileSync } from 'node:fs';

/** A PEM file's text, or why it cannot serve as one (missing, unreadable, not PEM). */
export function readPem(path: string): { pem: string } | { problem: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return { problem: `a readable PEM file (${e.code ?? e.message})` };
  }
  return text.includes('-----BEGIN ') ? { pem: text } : { problem: 'a PEM file (no -----BEGIN line in it)' };
}

/**
 * Node's codes for a certificate chain or name that does not verify (node:tls, OpenSSL's
 * X509_V_ERR_* names without the prefix), and for a handshake the server does not speak.
 */
const REFUSED_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

/**
 * The TLS refusal behind `err` (its cause chain searched), as a line for the boot error; undefined
 * for anything else. pg says so in words when the server turns TLS down. Duck-typed, not
 * `instanceof Error`: node:tls errors may come from another realm (a test VM, a worker).
 */
export function tlsRefusal(err: unknown): string | undefined {
  let e = err as { code?: unknown; message?: unknown; cause?: unknown } | null | undefined;
  for (let depth = 0; e && typeof e === 'object' && depth < 5; depth++, e = e.cause as typeof e) {
    const message = typeof e.message === 'string' ? e.message : '';
    if (typeof e.code === 'string' && REFUSED_CODES.has(e.code)) return `${message} (${e.code})`;
    if (/server does not support SSL/i.test(message)) return message;
  }
  return undefined;
}
