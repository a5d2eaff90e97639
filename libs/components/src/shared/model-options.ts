// Option blocks of the model-backed components (extract, summarize): which model to call and the
// trigger that decides whether a request is worth a model call at all. One schema, so `model.source`
// and `trigger.min_messages` mean the same thing in every component block.
import { Type } from '@sinclair/typebox';
import type { Message } from '../component';
import { NonNegInt } from './common-options';
import { totalTokens } from './tokens';

export const ModelOption = Type.Object(
  {
    /** incoming: the proxied request's own model and key; config: the gateway's cheap model. */
    source: Type.Union([Type.Literal('incoming'), Type.Literal('config')], { default: 'incoming' }),
    /** Re-points the chosen client at another model id on the same endpoint. */
    model: Type.Optional(Type.String({ minLength: 1 })),
  },
  { default: {} },
);

/** Request-level trigger: zero means no constraint. */
export const RequestTriggerFields = {
  min_request_tokens: NonNegInt(0),
  min_messages: NonNegInt(0),
};

/** Whether a request is large and deep enough for the trigger. */
export function requestTriggerFires(
  messages: readonly Message[],
  trigger: { min_request_tokens: number; min_messages: number },
  ctx?: { readonly requestTokens?: number },
): boolean {
  if (messages.length < trigger.min_messages) return false;
  if (trigger.min_request_tokens === 0) return true;
  // Read only now: the gateway computes the request's token count lazily.
  return (ctx?.requestTokens ?? totalTokens(messages)) >= trigger.min_request_tokens;
}
