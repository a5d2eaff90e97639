// Records what one request's compaction-model calls reported (model, input and output tokens), so
// their cost is charged to the request's tenant and subtracted from what compression saved, and
// counts them in the tenant's own spend recorder for its /stats. The process-wide recorder keeps
// counting every call for /metrics.
import type { Dialect, ModelClient, ModelSources } from '@context-guru/components';
import { ModelCallError } from '../model/http-model';
import type { SpendRecorder } from '../model/spend-recorder';
import type { ModelCall } from '@context-guru/engine';

function metered(client: ModelClient, calls: ModelCall[], spend: SpendRecorder): ModelClient {
  const colon = client.id.indexOf(':');
  const provider: Dialect = client.id.slice(0, colon) === 'anthropic' ? 'anthropic' : 'openai';
  const model = client.id.slice(colon + 1);
  return {
    id: client.id,
    async complete(req) {
      spend.call(req.purpose);
      let reply;
      try {
        reply = await client.complete(req);
      } catch (err) {
        if (err instanceof ModelCallError && err.kind === 'timeout') spend.timeout(req.purpose);
        else spend.error(req.purpose);
        throw err;
      }
      spend.usage(req.purpose, reply.inputTokens, reply.outputTokens, reply.truncated);
      calls.push({ provider, model: req.model ?? model, input: reply.inputTokens, output: reply.outputTokens });
      return reply;
    },
  };
}

/** The same sources, each call's reported usage appended to `calls` and counted in the tenant's `spend`. */
export function meterModelSources(sources: ModelSources, calls: ModelCall[], spend: SpendRecorder): ModelSources {
  const out: ModelSources = { ...sources };
  if (sources.incoming) out.incoming = metered(sources.incoming, calls, spend);
  if (sources.config) out.config = metered(sources.config, calls, spend);
  return out;
}
