// The Gemini routes carry the model and the method in the path
// (`/gemini/v1beta/models/{model}:generateContent`), and the stream form in the query: `alt=sse`
// for server-sent events, nothing for a JSON array that arrives piece by piece. The upstream URL
// is the client's path and query under GEMINI_UPSTREAM (an API key given as `?key=` goes with it).
export const GEMINI_PREFIX = '/gemini';

const CALL_RE = /^\/gemini\/(v1beta|v1|v1alpha)\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

/** One generateContent call as the client addressed it. */
export interface GeminiCall {
  /** The client's URL under the upstream (path and query as received). */
  url: string;
  model: string;
  stream: boolean;
  /** A stream asked for as a JSON array (no `alt=sse`). */
  jsonArray: boolean;
}

/** Whether a path (no query) is one the gateway compresses. */
export function isGeminiCall(path: string): boolean {
  return CALL_RE.test(path);
}

function hasSse(query: string): boolean {
  return new URLSearchParams(query).get('alt') === 'sse';
}

export function geminiCall(base: string, url: string): GeminiCall | null {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const m = CALL_RE.exec(path);
  if (!m) return null;
  const [, , rawModel = '', method] = m;
  const stream = method === 'streamGenerateContent';
  let model = rawModel;
  try {
    model = decodeURIComponent(rawModel);
  } catch {
    // A malformed escape is the model name as sent; the provider will say what it makes of it.
  }
  return { url: `${base}${url.slice(GEMINI_PREFIX.length)}`, model, stream, jsonArray: stream && !hasSse(q < 0 ? '' : url.slice(q + 1)) };
}

/**
 * The URL to call: the client's, except that a JSON-array stream on a request that offers the
 * expand tool is asked for as SSE (the gateway reads it event by event and answers the array).
 */
export function geminiUpstreamUrl(call: GeminiCall, advertised: boolean): string {
  if (!call.jsonArray || !advertised) return call.url;
  return `${call.url}${call.url.includes('?') ? '&' : '?'}alt=sse`;
}
