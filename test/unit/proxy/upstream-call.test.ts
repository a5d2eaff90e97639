// One upstream call of a chat request: once its client has gone away, it is not made at all (an
// expand continuation asked for after the abort never reaches the provider).
import type { ChatExchange } from '../../../apps/gateway/src/proxy/chat/chat-exchange';
import { upstreamCall } from '../../../apps/gateway/src/proxy/chat/upstream-call';
import { ClientAbort } from '../../../apps/gateway/src/http/upstream.client';

function exchange(posted: string[]): ChatExchange {
  const post = async (_url: string, _headers: unknown, body: string) => {
    posted.push(body);
    return { status: 200, headers: {}, body: null };
  };
  const metrics = { upstreamResponses: { inc: () => undefined }, upstreamDuration: { observe: () => undefined } };
  return {
    gw: { upstream: { post }, metrics },
    route: { dialect: 'anthropic', upstreamUrl: 'http://upstream.invalid/v1/messages' },
    trace: undefined,
  } as unknown as ChatExchange;
}

describe('upstreamCall', () => {
  it('sends while the client is there, and nothing once it went away', async () => {
    const posted: string[] = [];
    const abort = new ClientAbort();
    const call = upstreamCall(exchange(posted), 'http://upstream.invalid/v1/messages', {}, abort);
    await call('{"first":true}');
    abort.abort();
    await expect(call('{"continuation":true}')).rejects.toThrow('the client went away');
    expect(posted).toEqual(['{"first":true}']);
  });
});
