// Step 3 of a chat request: send the prepared body upstream and run the expand loop over the
// answer. A provider that cannot be reached, times out or answers a 2xx that is not JSON is
// answered in the dialect's shape; a client that went away is only recorded.
import { contentKey, countTokens } from '@context-guru/components';
import { trailSaver } from '../../expand/answer-trail';
import { runExpandLoop } from '../../expand/expand-loop';
import { type ExpandHooks, type UpstreamReply, errorText, type RequestReport, upstreamBytes } from '@context-guru/engine';
import { upstreamRequestHeaders } from '../../http/forward-headers';
import { geminiUpstreamUrl } from '../gemini-path';
import { gatewayError } from '../../http/gateway-errors';
import type { HotReply } from '../../http/hot-http';
import { nonJsonSuccess } from '../upstream-checks';
import { ClientAbort, isUpstreamTimeout } from '../../http/upstream.client';
import type { ChatExchange } from './chat-exchange';
import { stop, type Answered, type Forward, type OutgoingBody, type Stop } from './chat-outcome';
import { upstreamCall } from './upstream-call';
import { CloudCredentialsError } from '../../cloud/token-cache';

export async function forwardStep(x: ChatExchange, f: Forward, reply: HotReply): Promise<Answered | Stop> {
  const answered = await callUpstream(x, f, reply);
  if (answered.kind === 'stop') return answered;
  let notJson = nonJsonSuccess(answered.result);
  if (notJson instanceof Promise) notJson = await notJson;
  if (notJson === null) return answered;
  const { dialect } = x.route;
  x.gw.log.warn('upstream answered 2xx with a body that is not JSON', { dialect, first: notJson });
  return stop(
    'upstream_error',
    gatewayError(dialect, 'upstream_bad_response', 'upstream answered with a body that is not JSON'),
    answered.report,
  );
}

async function callUpstream(x: ChatExchange, f: Forward, reply: HotReply): Promise<Answered | Stop> {
  const { gw, req, route } = x;
  const report = f.prepared.report;
  const abort = new ClientAbort().watch(reply.raw);
  const headers = upstreamRequestHeaders(req.headers);
  if (f.streamed) headers['content-length'] = String(req.headers['content-length']);
  const { advertised } = f.prepared;
  const url = x.gemini ? geminiUpstreamUrl(x.gemini, advertised) : route.upstreamUrl;
  const call = upstreamCall(x, url, headers, abort);
  const keptKeys: string[] = [];
  const upstreamStarted = performance.now();
  try {
    let first: UpstreamReply;
    try {
      first = await call(outgoingBody(x, f, abort));
    } finally {
      f.releaseBody();
    }
    report.upstreamMs = performance.now() - upstreamStarted;
    report.upstreamStatus = first.status;
    const result = await runExpandLoop({
      dialect: route.dialect,
      requestRaw: f.prepared.outgoing,
      advertised,
      first,
      call,
      maxRounds: gw.env.maxExpandRounds,
      limits: gw.env.expandLimits,
      jsonArray: advertised && x.gemini?.jsonArray === true,
      // Without the expand tool on offer the loop only relays: no hooks to build for it.
      hooks: advertised
        ? { ...expandHooks(x, f.prepared.session, report, keptKeys), onTrail: trailSaver(gw.store, x.tenant.id, f.prepared.session) }
        : RELAY_ONLY,
    });
    return { kind: 'answered', result, report, abort, keptKeys };
  } catch (err) {
    // A streamed body found invalid on the way: the upstream call was cancelled for it.
    if (req.refused) throw req.refused;
    if (abort.aborted) return stop('client_abort', null, report);
    if (err instanceof CloudCredentialsError) {
      gw.log.warn('no upstream credentials for the cloud route', { error: errorText(err), route: route.path });
      return stop('upstream_error', gatewayError(route.dialect, 'upstream_credentials', err.message), report);
    }
    const timeout = isUpstreamTimeout(err);
    gw.log.warn('upstream call failed', { error: errorText(err), dialect: route.dialect });
    const e = timeout
      ? gatewayError(route.dialect, 'upstream_timeout', 'upstream timed out')
      : gatewayError(route.dialect, 'upstream_unreachable', 'upstream request failed');
    return stop('upstream_error', e, report);
  }
}

/** The hooks of an answer the expand loop only relays (never called: nothing is intercepted). */
const RELAY_ONLY: ExpandHooks = {
  resolve: () => Promise.resolve(null),
  onResolved: () => undefined,
};

/** An unchanged body goes out as the very bytes that came in. */
function outgoingBody(x: ChatExchange, f: Forward, abort: ClientAbort): OutgoingBody {
  if (f.streamed) return x.req.streamChecked(abort);
  return f.transparent ? f.inbound : upstreamBytes(f.prepared, f.raw, f.inbound);
}

/**
 * The expand loop resolves markers from this tenant's stash and counts every bounce. Like GET
 * /expand it answers only ids the requesting session owns: a model naming another session's id
 * gets the unavailable answer, never that session's original.
 */
function expandHooks(x: ChatExchange, session: string, report: RequestReport, keptKeys: string[]): ExpandHooks {
  const { gw, tenant, trace } = x;
  const read = async (id: string): Promise<string | null> =>
    (await gw.store.owns(tenant.id, session, id)) ? gw.store.getStash(tenant.id, id) : null;
  return {
    resolve: async (id) => {
      trace?.resolving();
      const text = await read(id).catch(() => null);
      if (text === null) report.stashMisses++;
      else report.stashHits++;
      return text;
    },
    onContinue: (usage) => {
      if (report.firstUsage === undefined) report.firstUsage = usage;
    },
    onResolved: (_id, original) => {
      report.bounces++;
      report.wastedTokens += countTokens(original);
      keptKeys.push(contentKey(original));
    },
  };
}
