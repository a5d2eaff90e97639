// Every other OpenAI route an agent calls beside the two the gateway compresses — Codex's
// /responses/compact, GET /responses/{id}, /responses/{id}/input_items, /models — is forwarded as
// received (method, path, query, body) to OPENAI_UPSTREAM, and its answer relayed as it comes.
// The tenant is still resolved, so a bad key is refused here as on the chat routes and a tenant
// key never reaches the provider (upstreamRequestHeaders drops it).
//
// A WebSocket upgrade (Codex asks for one on GET /responses first) is refused with 426 and a
// JSON error: the gateway serves the Responses API over HTTPS only, and the client falls back.
import type { GatewayContext } from '../gateway-context';
import { errorText } from '@context-guru/engine';
import { clientResponseHeaders, upstreamRequestHeaders } from '../http/forward-headers';
import { gatewayError } from '../http/gateway-errors';
import type { HotReply, HotRequest } from '../http/hot-http';
import { failureError } from '../http/request-errors';

const PREFIX = '/openai';

function isUpgrade(req: HotRequest): boolean {
  const upgrade = req.headers['upgrade'];
  return typeof upgrade === 'string' && upgrade.toLowerCase() === 'websocket';
}

export function openaiPassthroughHandler(gw: GatewayContext) {
  return async (req: HotRequest, reply: HotReply): Promise<HotReply> => {
    const json = (e: { status: number; body: string }) => reply.code(e.status).header('content-type', 'application/json').send(e.body);
    try {
      gw.tenants.resolve(req.headers);
    } catch (err) {
      return json(failureError('responses', err));
    }
    if (isUpgrade(req)) {
      reply.header('connection', 'close');
      return json(gatewayError('responses', 'websocket_unsupported', 'the Responses API is served over HTTPS only (no WebSocket)'));
    }
    const headers = upstreamRequestHeaders(req.headers);
    const method = req.method === 'POST' || req.method === 'DELETE' ? req.method : 'GET';
    const body = method === 'GET' ? undefined : req.body;
    if (body === undefined) delete headers['content-type'];
    try {
      const res = await gw.upstream.send(method, `${gw.env.openaiUpstream}${req.url.slice(PREFIX.length)}`, headers, body);
      return reply.code(res.status).headers(clientResponseHeaders(res.headers)).send(res.body);
    } catch (err) {
      gw.log.warn('upstream call failed', { error: errorText(err), dialect: 'responses', route: 'passthrough' });
      return json(gatewayError('responses', 'upstream_unreachable', 'upstream request failed'));
    }
  };
}
