// What a body must be before anything reads it: declared as JSON (or not declared, as the
// providers accept) and valid UTF-8. A body failing either is answered here and never forwarded.
import { isUtf8 } from 'node:buffer';
import type { IncomingHttpHeaders } from 'node:http';
import { type Dialect } from '@context-guru/engine';
import { mediaType } from './forward-headers';
import { gatewayError, type GatewayErrorBody } from './gateway-errors';

/** application/json, or any `+json` structured syntax suffix, with or without parameters. */
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;

/** The byte offset of the first byte that is not part of valid UTF-8 (the body is known invalid). */
export function firstInvalidUtf8(body: Buffer): number {
  // Decoding replaces each invalid sequence with U+FFFD; a U+FFFD the client really sent is EF BF BD.
  const text = body.toString('utf8');
  let bytes = 0;
  let from = 0;
  for (let at = text.indexOf('\uFFFD'); at >= 0; at = text.indexOf('\uFFFD', at + 1)) {
    bytes += Buffer.byteLength(text.slice(from, at));
    if (!(body[bytes] === 0xef && body[bytes + 1] === 0xbf && body[bytes + 2] === 0xbd)) return bytes;
    bytes += 3;
    from = at + 1;
  }
  return body.length;
}

/** 415 unless the declared content type is JSON (or none is declared, as the providers accept). */
export function checkContentType(dialect: Dialect, headers: IncomingHttpHeaders): GatewayErrorBody | null {
  const declared = headers['content-type'];
  if (declared !== undefined && declared.trim() !== '') {
    const type = mediaType(declared);
    if (!JSON_TYPE.test(type)) {
      return gatewayError(
        dialect,
        'unsupported_media_type',
        `content-type ${JSON.stringify(type)} is not supported; send application/json`,
      );
    }
  }
  return null;
}

export function invalidUtf8(dialect: Dialect, at: number): GatewayErrorBody {
  return gatewayError(dialect, 'invalid_utf8', `the body is not valid UTF-8 (first invalid byte at byte ${at})`);
}

export function checkBody(dialect: Dialect, headers: IncomingHttpHeaders, body: Buffer): GatewayErrorBody | null {
  return checkContentType(dialect, headers) ?? (isUtf8(body) ? null : invalidUtf8(dialect, firstInvalidUtf8(body)));
}
