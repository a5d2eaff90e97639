// Step 4 of a chat request: the provider's answer goes to the client. A buffered body is sent and
// recorded at once; a stream starts flowing as soon as the upstream headers (and any peek) arrive,
// and is recorded when it ends — a stream that fails mid-way ends with the dialect's error event.
import { isEventStream } from '../../expand/expand-loop';
import { errorText } from '@context-guru/engine';
import { clientResponseHeaders } from '../../http/forward-headers';
import { streamErrorEvent } from '../../http/gateway-errors';
import type { HotReply } from '../../http/hot-http';
import type { ChatExchange } from './chat-exchange';
import { endRequest } from './chat-end';
import type { Answered } from './chat-outcome';
import { cloudStreamError, toCloudClient } from '../../cloud/cloud-upstream';

/**
 * The response header of a turn that made a priced rewrite (docs/cache.md).
 * @internal exported for tests
 */
export const REWRITE_HEADER = 'x-context-guru-rewrite';

export function respondStep(x: ChatExchange, reply: HotReply, a: Answered): HotReply {
  const { gw, route } = x;
  const { report, abort } = a;
  const cloud = route.cloud?.target;
  // Bedrock's client reads an event stream again: the (stitched) SSE is framed back.
  const result = cloud ? toCloudClient(cloud, a.result) : a.result;
  report.expandRounds = result.rounds;
  if (result.mode !== 'json') report.sse = result.mode;
  report.expandAfterStream = result.expandAfterStream;
  markKept(x, a);
  reply.code(result.status).headers(clientResponseHeaders(result.headers, result.keepsLength === true));
  // A turn that changed the cached prefix on purpose says so, so a client can tell it from a bust.
  if (report.planned) reply.header(REWRITE_HEADER, `planned; from=${report.planned.from}`);
  if (Buffer.isBuffer(result.body)) {
    report.usage = result.usage;
    reply.send(result.body);
    endRequest(x, report, 'ok');
    return reply;
  }
  report.ttfbMs = performance.now() - x.started;
  void result.streamDone.then((outcome) => {
    report.usage = outcome.usage;
    report.expandAfterStream = outcome.expandAfterStream;
    report.expandRounds = outcome.rounds ?? report.expandRounds;
    markKept(x, a);
    if (outcome.error) gw.log.warn('upstream stream failed mid-way', { error: errorText(outcome.error) });
    endRequest(x, report, outcome.aborted || abort.aborted ? 'client_abort' : outcome.error ? 'upstream_stream_error' : 'ok');
  });
  const idle = gw.env.upstreamIdleTimeoutMs;
  if (cloud?.provider === 'bedrock' && result !== a.result) reply.onStreamError((err) => cloudStreamError(err, idle));
  else if (isEventStream(result.headers)) reply.onStreamError((err) => streamErrorEvent(route.dialect, err, idle));
  return reply.send(result.body);
}

/** Originals the model expanded are never reduced again; a stitched stream resolves them as it goes. */
function markKept(x: ChatExchange, a: Answered): void {
  if (!a.keptKeys.length) return;
  x.gw.store
    .markKept(x.tenant.id, a.keptKeys.splice(0))
    .catch((err) => x.gw.log.warn('kept-verbatim write failed', { error: errorText(err) }));
}
