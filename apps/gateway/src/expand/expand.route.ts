// GET /expand?id=HASH (or the whole marker): out-of-band recovery of a stashed original, scoped to the caller's tenant
// and session through the ownership record written when that session stashed it.
import type { GatewayContext } from '../gateway-context';
import { headerValue } from '../proxy/forward-headers';
import { decodeFailure } from '../proxy/request-errors';
import type { HotReply, HotRequest } from '../proxy/hot-http';
import { expandIdOf } from './expand-calls';
import { sessionIdBase } from '../wire/session-key';

const ID_RE = /^[A-Za-z0-9_-]{1,64}$/;

export function expandHandler(gw: GatewayContext) {
  return async (req: HotRequest, reply: HotReply): Promise<HotReply> => {
    const notFound = (message: string) => reply.code(404).header('content-type', 'application/json').send(JSON.stringify({ error: message }));
    let tenant;
    try {
      tenant = gw.tenants.resolve(req.headers);
    } catch (err) {
      decodeFailure(reply, 'openai', err);
      return reply;
    }
    const id = expandIdOf(req.query?.id ?? '');
    if (!ID_RE.test(id)) {
      return reply.code(400).header('content-type', 'application/json').send(JSON.stringify({ error: 'id must be a HASH ([A-Za-z0-9_-]{1,64}) or a whole <<cg:HASH>> marker' }));
    }
    const base = sessionIdBase(headerValue(req.headers, 'x-context-guru-session') ?? req.query?.session ?? '');
    if (!base) return notFound('expired, unknown, or not owned by this session');
    const session = `${tenant.id}:${base}`;
    try {
      if (!(await gw.store.owns(tenant.id, session, id))) return notFound('expired, unknown, or not owned by this session');
      const text = await gw.store.getStash(tenant.id, id);
      if (text === null) return notFound('expired or unknown id');
      return reply.code(200).header('content-type', 'text/plain; charset=utf-8').send(text);
    } catch {
      return reply.code(503).header('content-type', 'application/json').send(JSON.stringify({ error: 'store unavailable' }));
    }
  };
}
