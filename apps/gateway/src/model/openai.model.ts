// The OpenAI Chat Completions dialect for compaction calls: a system and a user message, max_tokens,
// no temperature or seed. Models that refuse `max_tokens` (reasoning models want
// `max_completion_tokens`) get exactly one retry with the renamed field.
import { isObject, type ModelClient, type ModelReply } from '@context-guru/components';
import { HttpModelClient, ModelCallError, joinV1, type Endpoint, type ModelDialect, type ModelRuntime } from './http-model';

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** Variant 1 names the output cap `max_completion_tokens`. */
const COMPLETION_TOKENS_VARIANT = 1;

const openaiDialect: ModelDialect = {
  provider: 'openai',
  url: (base) => joinV1(base, 'chat/completions'),
  body: (req, model, variant) => ({
    model,
    [variant === COMPLETION_TOKENS_VARIANT ? 'max_completion_tokens' : 'max_tokens']: req.maxTokens,
    messages: [
      { role: 'system', content: req.system },
      { role: 'user', content: req.prompt },
    ],
  }),
  parse(json): ModelReply {
    if (!isObject(json) || !Array.isArray(json.choices) || !isObject(json.choices[0])) {
      throw new ModelCallError('bad_reply', 'openai reply without choices');
    }
    const choice = json.choices[0];
    const message = isObject(choice.message) ? choice.message : {};
    const content = message.content;
    const text =
      typeof content === 'string'
        ? content
        : Array.isArray(content)
          ? content.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join('')
          : '';
    const u = isObject(json.usage) ? json.usage : {};
    return {
      text,
      inputTokens: num(u.prompt_tokens),
      outputTokens: num(u.completion_tokens),
      truncated: choice.finish_reason === 'length',
    };
  },
  retryVariant: (status, errorText, variant) =>
    status === 400 && variant === 0 && /max_completion_tokens/.test(errorText) ? COMPLETION_TOKENS_VARIANT : null,
};

export function openaiModel(endpoint: Endpoint, rt: ModelRuntime): ModelClient {
  return new HttpModelClient(openaiDialect, endpoint, rt);
}
