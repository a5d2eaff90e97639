// POST /compact: the pipeline alone, no upstream. Returns the body that would be forwarded, so
// operators can replay captured traffic and see exactly what a preset does.
import { ConfigError } from '@context-guru/components';
import type { CacheMode } from '../env';
import type { GatewayContext } from '../gateway-context';
import { presetPipeline } from '../tenancy/tenant-runtime';
import type { Dialect } from '../wire/wire.types';
import { clientHints } from './forward-headers';
import { prepareDeps } from './chat/prepare.step';
import { gatewayError } from './gateway-errors';
import { prepareRequest } from './prepare-request';
import { createModelSources } from '../model/model-resolver';
import { decodeFailure } from './request-errors';
import type { HotReply, HotRequest } from './hot-http';
import { meterModelSources, type ModelCall } from '../observability/model-meter';
import { recordRequest } from '../observability/metrics-record';

interface CompactQuery {
  provider?: string;
  preset?: string;
  cache?: string;
}

export function compactHandler(gw: GatewayContext) {
  return async (req: HotRequest, reply: HotReply): Promise<HotReply> => {
    const q: CompactQuery = req.query;
    const dialect: Dialect = q.provider === 'anthropic' || q.provider === 'responses' ? q.provider : 'openai';
    const cache = q.cache ?? gw.env.cacheMode;
    if (!['auto', 'on', 'off'].includes(cache)) {
      const e = gatewayError(dialect, 'invalid_query', `cache must be one of auto, on, off (got "${cache}")`);
      return reply.code(e.status).header('content-type', 'application/json').send(e.body);
    }
    let tenant;
    let pipeline;
    try {
      tenant = gw.tenants.resolve(req.headers);
      pipeline = q.preset ? presetPipeline(tenant, q.preset).pipeline : tenant.built.pipeline;
    } catch (err) {
      if (err instanceof ConfigError && err.code === 'unknown_preset') {
        const e = gatewayError(dialect, 'invalid_preset', err.message);
        return reply.code(e.status).header('content-type', 'application/json').send(e.body);
      }
      decodeFailure(reply, dialect, err);
      return reply;
    }
    const started = performance.now();
    try {
      const modelCalls: ModelCall[] = [];
      const prepared = await prepareRequest(prepareDeps(gw), {
        route: 'compact',
        dialect,
        raw: req.body.toString('utf8'),
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
