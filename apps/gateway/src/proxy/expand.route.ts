// GET /expand?id=HASH (or the whole marker): out-of-band recovery of a stashed original, scoped to the caller's tenant
// and session through the ownership record written when that session stashed it. Without a tenant
// key the session must be named by the client: an id of the derived shape (what a request naming
// no session gets, sha256 of system head and first user text, computable offline from a guessable
// first message) is refused — that session's own in-band expand is unaffected (docs/security.md).
import { isStoreUnavailable } from '@context-guru/storage';
import type { GatewayErrorCode } from '../http/error-codes';
import type { GatewayContext } from '../gateway-context';
import { errorText, expandIdOf, isDerivedSessionBase, namedSessionBase, SESSION_HEADER } from '@context-guru/engine';
import { headerValue } from '../http/forward-headers';
import { gatewayError } from '../http/gateway-errors';
import { decodeFailure } from '../http/request-errors';
import type { HotReply, HotRequest } from '../http/hot-http';
import { findTenantKey } from '../http/tenant-key';

const ID_RE = /^[A-Za-z0-9_-]{1,64}$/;

export function expandHandler(gw: GatewayContext) {
  return async (req: HotRequest, reply: HotReply): Promise<HotReply> => {
    // The same error shape as every other error the gateway makes (OpenAI's: /expand has no dialect).
    const fail = (code: GatewayErrorCode, message: string) => {
      const e = gatewayError('openai', code, message);
      return reply.code(e.status).header('content-type', 'application/json').send(e.body);
    };
    const notFound = (message: string) => fail('expand_not_found', message);
    let tenant;
    try {
      tenant = gw.tenants.resolve(req.headers);
    } catch (err) {
      decodeFailure(reply, 'openai', err);
      return reply;
    }
    const id = expandIdOf(req.query?.id ?? '');
    if (!ID_RE.test(id)) {
      return fail('expand_bad_id', 'id must be a HASH ([A-Za-z0-9_-]{1,64}) or a whole <<cg:HASH>> marker');
    }
    const named = headerValue(req.headers, SESSION_HEADER) ?? req.query?.session;
    if (named === undefined) return notFound('expired, unknown, or not owned by this session');
    const base = namedSessionBase(named);
    if (isDerivedSessionBase(base) && findTenantKey(req.headers).kind !== 'key') {
      return notFound(
        'a session id derived from its content reads no original without a tenant key: name the session (x-context-guru-session)',
      );
    }
    const session = `${tenant.id}:${base}`;
    try {
      if (!(await gw.store.owns(tenant.id, session, id))) return notFound('expired, unknown, or not owned by this session');
      const text = await gw.store.getStash(tenant.id, id);
      if (text === null) return notFound('expired or unknown id');
      return reply.code(200).header('content-type', 'text/plain; charset=utf-8').send(text);
    } catch (err) {
      if (isStoreUnavailable(err)) return fail('store_unavailable', 'store unavailable');
      gw.log.error('expand failed', { error: errorText(err) });
      return fail('internal_error', 'internal error');
    }
  };
}
