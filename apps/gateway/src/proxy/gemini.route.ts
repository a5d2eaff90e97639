// The Gemini routes under /gemini: `POST …/models/{model}:generateContent` and
// `:streamGenerateContent` go through the chat steps like every dialect's chat route; every other
// path (`:countTokens`, `GET /v1beta/models`, files, cachedContents…) is forwarded as received
// (method, path, query, body) to GEMINI_UPSTREAM after the tenant key is checked, and its answer
// relayed as it comes. The caller's API key (`x-goog-api-key`, or `?key=` in the query) goes with
// it untouched.
import type { GatewayContext } from '../gateway-context';
import { errorText } from '@context-guru/engine';
import { chatHandler } from './chat.route';
import { clientResponseHeaders, upstreamRequestHeaders } from '../http/forward-headers';
import { GEMINI_PREFIX, isGeminiCall } from './gemini-path';
import { gatewayError } from '../http/gateway-errors';
import type { HotReply, HotRequest } from '../http/hot-http';
import { failureError } from '../http/request-errors';

export function geminiHandler(gw: GatewayContext) {
  const chat = chatHandler(gw, 'gemini');
  return async (req: HotRequest, reply: HotReply): Promise<HotReply> => {
    const q = req.url.indexOf('?');
    const path = q < 0 ? req.url : req.url.slice(0, q);
    if (req.method === 'POST' && isGeminiCall(path)) return chat(req, reply);
    const json = (e: { status: number; body: string }) => reply.code(e.status).header('content-type', 'application/json').send(e.body);
    try {
      gw.tenants.resolve(req.headers);
    } catch (err) {
      return json(failureError('gemini', err));
    }
    const method = req.method === 'POST' || req.method === 'DELETE' || req.method === 'PATCH' ? req.method : 'GET';
    const body = method === 'GET' || method === 'DELETE' ? undefined : await req.readBody();
    const headers = upstreamRequestHeaders(req.headers);
    if (body === undefined) delete headers['content-type'];
    try {
      const res = await gw.upstream.send(method, `${gw.env.geminiUpstream}${req.url.slice(GEMINI_PREFIX.length)}`, headers, body);
      return reply.code(res.status).headers(clientResponseHeaders(res.headers)).send(res.body);
    } catch (err) {
      gw.log.warn('upstream call failed', { error: errorText(err), dialect: 'gemini', route: 'passthrough' });
      return json(gatewayError('gemini', 'upstream_unreachable', 'upstream request failed'));
    }
  };
}
