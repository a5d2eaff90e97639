// The request path's two touch points with shadow evaluation, kept here so the chat steps stay a
// line each: a ticket is drawn when the exchange opens (a request that may be sampled without a
// session key — an empty active pipeline decodes nothing — is then read whole instead of streamed,
// so the candidate can see the same bytes; what is forwarded does not change), and the offer is
// made once the upstream call is under way.
import { headerValue } from '../../http/forward-headers';
import { SESSION_HEADER } from '@context-guru/engine';
import type { ChatExchange } from './chat-exchange';
import type { Forward } from './chat-outcome';

export function offerShadow(x: ChatExchange, f: Forward): void {
  if (!x.shadow) return;
  const session = headerValue(x.req.headers, SESSION_HEADER);
  x.gw.shadow.runner.offer(x.shadow, x.tenant, x.route.dialect, f.transparent ? f.inbound : f.raw, f.prepared.report, session);
}
