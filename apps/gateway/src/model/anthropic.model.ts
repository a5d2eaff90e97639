// The Anthropic Messages dialect for compaction calls: one user turn, a system prompt, max_tokens,
// no temperature or seed. Input tokens include cache reads and writes — all of it is spend.
import { isObject, type ModelClient, type ModelReply } from '@context-guru/components';
import { HttpModelClient, ModelCallError, joinV1, type Endpoint, type ModelDialect, type ModelRuntime } from './http-model';

export const ANTHROPIC_VERSION = '2023-06-01';

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

const anthropicDialect: ModelDialect = {
  provider: 'anthropic',
  url: (base) => joinV1(base, 'messages'),
  body: (req, model) => ({
    model,
    max_tokens: req.maxTokens,
    system: req.system,
    messages: [{ role: 'user', content: req.prompt }],
  }),
  parse(json): ModelReply {
    if (!isObject(json) || !Array.isArray(json.content)) throw new ModelCallError('bad_reply', 'anthropic reply without content');
    const text = json.content.map((b) => (isObject(b) && b.type === 'text' && typeof b.text === 'string' ? b.text : '')).join('');
    const u = isObject(json.usage) ? json.usage : {};
    return {
      text,
      inputTokens: num(u.input_tokens) + num(u.cache_read_input_tokens) + num(u.cache_creation_input_tokens),
      outputTokens: num(u.output_tokens),
      truncated: json.stop_reason === 'max_tokens',
    };
  },
};

export function anthropicModel(endpoint: Endpoint, rt: ModelRuntime): ModelClient {
  return new HttpModelClient(anthropicDialect, endpoint, rt);
}
