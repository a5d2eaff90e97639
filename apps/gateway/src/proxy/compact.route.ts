// POST /compact: the pipeline alone, no upstream. Returns the body that would be forwarded, so
// operators can replay captured traffic and see exactly what a preset does. It stores originals
// without a provider call, so each tenant has COMPACT_PER_MINUTE of them, checked before the body
// is read; `?preset=` runs another pipeline than the operator's, so only COMPACT_PRESET_OVERRIDE allows it.
import { ConfigError } from '@context-guru/components';
import { type CacheMode, presetPipeline, type Dialect, prepareRequest, type ModelCall, RateLimit } from '@context-guru/engine';
import type { GatewayContext } from '../gateway-context';
import { clientHints } from '../http/forward-headers';
import { prepareDeps } from './chat/prepare.step';
import { gatewayError } from '../http/gateway-errors';
import { createModelSources } from '../model/model-resolver';
import { decodeFailure } from '../http/request-errors';
import type { HotReply, HotRequest } from '../http/hot-http';
import { meterModelSources } from '../observability/model-meter';
import { recordRequest } from '../observability/metrics-record';

interface CompactQuery {
  provider?: string;
  preset?: string;
  cache?: string;
}

export function compactHandler(gw: GatewayContext) {
  const limit = new RateLimit(gw.env.compactPerMinute);
  return async (req: HotRequest, reply: HotReply): Promise<HotReply> => {
    const q: CompactQuery = req.query;
    const dialect: Dialect = q.provider === 'anthropic' || q.provider === 'responses' || q.provider === 'gemini' ? q.provider : 'openai';
    const cache = q.cache ?? gw.env.cacheMode;
    if (!['auto', 'on', 'off'].includes(cache)) {
      const e = gatewayError(dialect, 'invalid_query', `cache must be one of auto, on, off (got "${cache}")`);
      return reply.code(e.status).header('content-type', 'application/json').send(e.body);
    }
    let tenant;
    let pipeline;
    try {
      tenant = gw.tenants.resolve(req.headers);
      if (q.preset && !gw.env.compactPresetOverride) {
        const e = gatewayError(dialect, 'compact_preset_forbidden', 'preset overrides are off here (COMPACT_PRESET_OVERRIDE)');
        return reply.code(e.status).header('content-type', 'application/json').send(e.body);
      }
      pipeline = q.preset ? presetPipeline(tenant, q.preset).pipeline : tenant.built.pipeline;
    } catch (err) {
      if (err instanceof ConfigError && err.code === 'unknown_preset') {
        const e = gatewayError(dialect, 'invalid_preset', err.message);
        return reply.code(e.status).header('content-type', 'application/json').send(e.body);
      }
      decodeFailure(reply, dialect, err);
      return reply;
    }
    const wait = limit.take(tenant.id);
    if (wait > 0) {
      const e = gatewayError(dialect, 'compact_rate_limited', `at most ${limit.perMinute} /compact calls a minute; retry in ${wait} s`);
      return reply.code(e.status).header('content-type', 'application/json').header('retry-after', String(wait)).send(e.body);
    }
    // Read (and checked) only now; a refusal propagates to the server, which answers it.
    const body = await req.readBody();
    const started = performance.now();
    try {
      const modelCalls: ModelCall[] = [];
      const prepared = await prepareRequest(prepareDeps(gw), {
        route: 'compact',
        dialect,
        raw: body.toString('utf8'),
        tenant,
        pipeline,
        cacheMode: cache as CacheMode,
        ...clientHints(req.headers),
        // No upstream call here, so no incoming model either: only the operator's cheap model.
        models: () =>
          meterModelSources(
            createModelSources(gw.env.model, { dialect, model: undefined, upstreamBase: '', headers: {} }, gw.models),
            modelCalls,
            gw.stats.spend(tenant.id),
          ),
      });
      gw.stats.record(prepared.report);
      recordRequest(gw.metrics, prepared.report, 'ok', (performance.now() - started) / 1000);
      prepared.report.modelCalls = modelCalls;
      gw.usage.record(prepared.report);
      return reply.code(200).header('content-type', 'application/json').send(prepared.outgoing);
    } catch (err) {
      decodeFailure(reply, dialect, err);
      return reply;
    }
  };
}
