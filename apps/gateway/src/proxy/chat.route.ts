// The chat routes: a request goes through named steps in order — admit (tenant), prepare (body,
// pipeline), forward (upstream, expand loop), respond (relay to the client). Each step returns
// an explicit outcome; a `stop` answers the client with a gateway error (or nothing, when it has
// gone) and records how the request ended. Streams are piped with backpressure and a client
// abort cancels upstream.
import type { GatewayContext } from '../gateway-context';
import { type Dialect } from '@context-guru/engine';
import type { HotReply, HotRequest } from '../http/hot-http';
import { admitStep } from './chat/admit.step';
import { stopped } from './chat/chat-end';
import { chatRoute, openExchange, type ChatRoute } from './chat/chat-exchange';
import { forwardStep } from './chat/forward.step';
import { prepareStep } from './chat/prepare.step';
import { respondStep } from './chat/respond.step';
import { offerShadow } from './chat/shadow-hook';

export function chatHandler(gw: GatewayContext, dialect: Dialect) {
  const route = chatRoute(gw, dialect);
  return (req: HotRequest, reply: HotReply): Promise<HotReply> => handleChat(gw, route, req, reply);
}

/** One chat request on `route` (fixed at boot, or decoded from the path by a cloud route). */
export async function handleChat(gw: GatewayContext, route: ChatRoute, req: HotRequest, reply: HotReply): Promise<HotReply> {
  const started = performance.now();
  const admitted = admitStep(gw, route, req);
  if (admitted.kind === 'stop') return stopped(reply, admitted);
  const x = openExchange(gw, route, req, admitted.tenant, started);
  const forward = await prepareStep(x);
  if (forward.kind === 'stop') return stopped(reply, forward, x);
  const answering = forwardStep(x, forward, reply);
  // The upstream call is under way here: work scheduled now runs beside it, off the hot path.
  offerShadow(x, forward);
  const answered = await answering;
  if (answered.kind === 'stop') return stopped(reply, answered, x);
  return respondStep(x, reply, answered);
}
