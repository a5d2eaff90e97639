// The official SDK stream helpers as parsers: feed them a stream body (in awkward 5-byte chunks)
// and get the final message they assemble, which is what real clients run on our output.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { ANTHROPIC_MODEL, OPENAI_MODEL, chunked } from './fake-upstream-sse';

/** A fetch that answers with `sse`, delivered in 5-byte chunks. */
function sseFetch(sse: string | Buffer): typeof fetch {
  return async () => {
    const parts = chunked(sse, 5);
    const body = new ReadableStream<Uint8Array>({
      start(ctrl) {
        for (const p of parts) ctrl.enqueue(new Uint8Array(p));
        ctrl.close();
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  };
}

export async function anthropicFinal(sse: string | Buffer): Promise<Anthropic.Message> {
  const client = new Anthropic({ apiKey: 'sk-ant-test', maxRetries: 0, fetch: sseFetch(sse) });
  return client.messages.stream({ model: ANTHROPIC_MODEL, max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
}

export async function openAiFinal(sse: string | Buffer): Promise<OpenAI.Chat.Completions.ChatCompletion> {
  const client = new OpenAI({ apiKey: 'sk-test', maxRetries: 0, fetch: sseFetch(sse) });
  return client.chat.completions
    .stream({ model: OPENAI_MODEL, messages: [{ role: 'user', content: 'hi' }], stream_options: { include_usage: true } })
    .finalChatCompletion();
}
