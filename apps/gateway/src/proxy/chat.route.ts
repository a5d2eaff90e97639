// The chat routes: prepare the body, forward it, run the expand loop, and hand the reply to the
// client — streaming bodies are piped with backpressure and a client abort cancels upstream.
import { contentKey, countTokens } from '@context-guru/components';
import { isEventStream, runExpandLoop } from '../expand/expand-loop';
import type { ClientReply } from '../expand/expand.types';
import type { GatewayContext } from '../gateway-context';
import { errorText } from '../observability/logger';
import type { RequestReport } from '../observability/request-report';
import { WireError, type Dialect } from '../wire/wire.types';
import { clientResponseHeaders, headerValue, upstreamRequestHeaders } from './forward-headers';
import { gatewayError, streamErrorEvent } from './gateway-errors';
import { isTransparent, prepareRequest, type Prepared } from './prepare-request';
import { emptyReport } from '../observability/request-report';
import { createModelSources } from '../model/model-resolver';
import { ClientAbort, isUpstreamTimeout } from './upstream.client';
import type { Readable } from 'node:stream';
import { meterModelSources, type ModelCall } from '../observability/model-meter';
import { headModel, presetLabel } from '../observability/labels';
import type { RequestTrace } from '../observability/request-trace';
import { decodeFailure } from './request-errors';
import { nonJsonSuccess } from './upstream-checks';
import type { HotReply, HotRequest } from './hot-http';

const UPSTREAM_PATH: Record<Dialect, string> = { openai: '/v1/chat/completions', anthropic: '/v1/messages' };
const ROUTE: Record<Dialect, string> = { openai: '/openai/v1/chat/completions', anthropic: '/anthropic/v1/messages' };

export function chatHandler(gw: GatewayContext, dialect: Dialect) {
  const base = dialect === 'openai' ? gw.env.openaiUpstream : gw.env.anthropicUpstream;
  const url = `${base}${UPSTREAM_PATH[dialect]}`;
  return async (req: HotRequest, reply: HotReply): Promise<HotReply> => {
    const started = performance.now();
    let tenant;
    try {
      tenant = gw.tenants.resolve(req.headers);
    } catch (err) {
      decodeFailure(reply, dialect, err);
      return reply;
    }
    const trace = gw.tracing?.begin(req.headers, dialect, ROUTE[dialect]);
    let prepared: Prepared;
    const modelCalls: ModelCall[] = [];
    // An empty pipeline is a transparent proxy: the body is not even decoded to text, and one of a
    // declared length is streamed upstream as it arrives (still checked) instead of read whole.
    let transparent = isTransparent(tenant.built.pipeline, gw.env.injectExpand, tenant.replays);
    const streamed = transparent && req.streamable;
    const rawBuf = streamed ? req.body : await req.readBody();
    // Compression waits for its turn in a bounded queue; with the queue full the request is served
    // at once without new compression work (shed) instead.
    const turn = transparent ? false : await gw.compression.enter();
    const raw = transparent ? '' : rawBuf.toString('utf8');
    try {
      prepared = transparent
        ? passthrough(dialect, tenant.id)
        : await prepareRequest(
            { store: gw.store, turns: gw.turns, clock: gw.clock, log: gw.log, injectMode: gw.env.injectExpand },
            {
              route: dialect,
              dialect,
              raw,
              tenant,
              pipeline: tenant.built.pipeline,
              cacheMode: gw.env.cacheMode,
              shed: !turn,
              sessionHeader: headerValue(req.headers, 'x-context-guru-session'),
              bypassHeader: (headerValue(req.headers, 'x-context-guru-bypass') ?? '').toLowerCase() === 'true',
              models: (body) =>
                meterModelSources(
                  createModelSources(gw.env.model, { dialect, model: body.model, upstreamBase: base, headers: req.headers }, gw.models),
                  modelCalls,
                ),
            },
          );
    } catch (err) {
      // A body the client got wrong is answered precisely; a fault of ours fails open.
      if (err instanceof WireError) {
        decodeFailure(reply, dialect, err);
        trace?.end(emptyReport(dialect, tenant.id), 'bad_request');
        return reply;
      }
      gw.log.warn('decoding failed open; forwarding the original body', { error: errorText(err) });
      transparent = true;
      prepared = passthrough(dialect, tenant.id);
      prepared.report.failOpen = 'internal_error';
    } finally {
      if (turn) gw.compression.leave();
    }
    const report = prepared.report;
    report.preset = presetLabel(tenant);
    report.modelCalls = modelCalls;
    if (transparent && Buffer.isBuffer(rawBuf)) report.model = headModel(rawBuf);
    trace?.prepared({ tenant: tenant.id, configVersion: tenant.configVersion, preset: report.preset, session: prepared.session }, report);
    const abort = new ClientAbort().watch(reply.raw);
    const headers = upstreamRequestHeaders(req.headers);
    if (streamed) headers['content-length'] = String(req.headers['content-length']);
    const call = async (body: string | Buffer | Readable) => {
      const t0 = performance.now();
      const span = trace?.upstream(headers);
      try {
        const r = await gw.upstream.post(url, span?.headers ?? headers, body, abort);
        gw.metrics.recordUpstream(dialect, r.status, (performance.now() - t0) / 1000);
        span?.end(r.status);
        return r;
      } catch (err) {
        gw.metrics.recordUpstream(dialect, 'error', (performance.now() - t0) / 1000);
        span?.end('error');
        throw err;
      }
    };
    const keptKeys: string[] = [];
    let result: ClientReply;
    const upstreamStarted = performance.now();
    try {
      // An unchanged body goes out as the very bytes that came in.
      const first = await call(streamed ? req.streamChecked(abort) : transparent || prepared.outgoing === raw ? rawBuf : prepared.outgoing);
      report.upstreamMs = performance.now() - upstreamStarted;
      report.upstreamStatus = first.status;
      result = await runExpandLoop({
        dialect,
        requestRaw: prepared.outgoing,
        advertised: prepared.advertised,
        first,
        call,
        maxRounds: gw.env.maxExpandRounds,
        hooks: {
          resolve: async (id) => {
            trace?.resolving();
            const text = await gw.store.getStash(tenant.id, id).catch(() => null);
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
        },
      });
    } catch (err) {
      // A streamed body found invalid on the way: the upstream call was cancelled for it.
      if (req.refused) throw req.refused;
      if (abort.aborted) {
        finish(gw, report, 'client_abort', started, trace);
        return reply;
      }
      const timeout = isUpstreamTimeout(err);
      gw.log.warn('upstream call failed', { error: errorText(err), dialect });
      const e = gatewayError(
        dialect,
        timeout ? 504 : 502,
        timeout ? 'upstream_timeout' : 'upstream_unreachable',
        timeout ? 'upstream timed out' : 'upstream request failed',
      );
      reply.code(e.status).header('content-type', 'application/json').send(e.body);
      finish(gw, report, 'upstream_error', started, trace);
      return reply;
    }
    const notJson = await nonJsonSuccess(result);
    if (notJson !== null) {
      gw.log.warn('upstream answered 2xx with a body that is not JSON', { dialect, first: notJson });
      const e = gatewayError(dialect, 502, 'upstream_bad_response', 'upstream answered with a body that is not JSON');
      reply.code(e.status).header('content-type', 'application/json').send(e.body);
      finish(gw, report, 'upstream_error', started, trace);
      return reply;
    }
    report.expandRounds = result.rounds;
    if (result.mode !== 'json') report.sse = result.mode;
    report.expandAfterStream = result.expandAfterStream;
    // Originals the model expanded are never reduced again; a stitched stream resolves them as it goes.
    const markKept = () => {
      if (keptKeys.length)
        gw.store
          .markKept(tenant.id, keptKeys.splice(0))
          .catch((err) => gw.log.warn('kept-verbatim write failed', { error: errorText(err) }));
    };
    markKept();
    reply.code(result.status).headers(clientResponseHeaders(result.headers));
    if (Buffer.isBuffer(result.body)) {
      report.usage = result.usage;
      reply.send(result.body);
      finish(gw, report, 'ok', started, trace);
      return reply;
    }
    // Streams start flowing to the client as soon as the upstream headers (and any peek) arrive.
    report.ttfbMs = performance.now() - started;
    void result.streamDone.then((outcome) => {
      report.usage = outcome.usage;
      report.expandAfterStream = outcome.expandAfterStream;
      report.expandRounds = outcome.rounds ?? report.expandRounds;
      markKept();
      if (outcome.error) gw.log.warn('upstream stream failed mid-way', { error: errorText(outcome.error) });
      finish(
        gw,
        report,
        outcome.aborted || abort.aborted ? 'client_abort' : outcome.error ? 'upstream_stream_error' : 'ok',
        started,
        trace,
      );
    });
    if (isEventStream(result.headers)) reply.onStreamError((err) => streamErrorEvent(dialect, err, gw.env.upstreamIdleTimeoutMs));
    return reply.send(result.body);
  };
}

function passthrough(dialect: Dialect, tenant: string): Prepared {
  return { session: '', outgoing: '', advertised: false, report: emptyReport(dialect, tenant) };
}

function finish(gw: GatewayContext, report: RequestReport, outcome: string, started: number, trace?: RequestTrace): void {
  try {
    trace?.end(report, outcome);
    gw.stats.record(report);
    gw.metrics.record(report, outcome, (performance.now() - started) / 1000);
    gw.usage.record(report);
  } catch (err) {
    gw.log.error('stats recording failed', { error: errorText(err) });
  }
}
