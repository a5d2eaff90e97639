// Records what one request's compaction-model calls reported (model, input and output tokens), so
// their cost is charged to the request's tenant and subtracted from what compression saved. The
// process-wide spend recorder keeps counting calls and failures; this only adds who and how much.
import type { Dialect, ModelClient, ModelSources } from '@context-guru/components';

export interface ModelCall {
  provider: Dialect;
  model: string;
  input: number;
  output: number;
}

function metered(client: ModelClient, calls: ModelCall[]): ModelClient {
  const colon = client.id.indexOf(':');
  const provider: Dialect = client.id.slice(0, colon) === 'anthropic' ? 'anthropic' : 'openai';
  const model = client.id.slice(colon + 1);
  return {
    id: client.id,
    async complete(req) {
      const reply = await client.complete(req);
      calls.push({ provider, model: req.model ?? model, input: reply.inputTokens, output: reply.outputTokens });
      return reply;
    },
  };
}

/** The same sources, each call's reported usage appended to `calls`. */
export function meterModelSources(sources: ModelSources, calls: ModelCall[]): ModelSources {
  const out: ModelSources = { ...sources };
  if (sources.incoming) out.incoming = metered(sources.incoming, calls);
  if (sources.config) out.config = metered(sources.config, calls);
  return out;
}
