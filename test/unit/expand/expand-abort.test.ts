// The expand loop over a stream when its client goes away: whatever upstream call is in flight is
// released, and no continuation is asked for once the client is gone.
import { PassThrough, type Readable } from 'node:stream';
import { runExpandLoop } from '../../../apps/gateway/src/expand/expand-loop';
import type { CallUpstream, ExpandHooks } from '../../../libs/engine/src/expand/expand.types';
import { anthropicRequestRaw, scriptedUpstream, stashHooks } from '../../support/fake-upstream-json';
import { anthropicSse, anthropicTextSse, expandToolUse, sseReply } from '../../support/fake-upstream-sse';

const HASH = '3f2a9c0d1e4b5a6c';
const PREAMBLE = 'Let me look at the full output.';

/** The loop over a first answer that writes a sentence and asks for HASH. */
function expandLoop(call: CallUpstream, hooks: ExpandHooks) {
  const first = sseReply(anthropicSse([{ type: 'text', text: PREAMBLE }, expandToolUse(HASH)]));
  return runExpandLoop({ dialect: 'anthropic', requestRaw: anthropicRequestRaw(true), advertised: true, first, call, hooks });
}

describe('a client that goes away', () => {
  it('cancels the continuation stream in flight', async () => {
    const cont = new PassThrough();
    const partial = anthropicTextSse('partial');
    cont.write(partial.slice(0, partial.indexOf('event: content_block_stop')));
    const upstream = scriptedUpstream([() => ({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: cont })]);
    const reply = await expandLoop(upstream.call, stashHooks({ [HASH]: 'x' }));
    const body = reply.body as Readable;
    let seen = '';
    for await (const c of body) {
      seen += (c as Buffer).toString();
      if (seen.includes('"text":"partial')) break;
    }
    expect(upstream.sent).toHaveLength(1);
    body.destroy();
    const outcome = await reply.streamDone;
    expect(outcome.aborted).toBe(true);
    expect(cont.destroyed).toBe(true);
  });

  it('while the originals are being looked up: the continuation is never asked for', async () => {
    let lookingUp!: () => void;
    const lookup = new Promise<void>((resolve) => (lookingUp = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const stash = stashHooks({ [HASH]: 'x' });
    const upstream = scriptedUpstream([() => sseReply(anthropicTextSse('never asked for'))]);
    const held: ExpandHooks = {
      ...stash,
      resolve: async (id) => {
        lookingUp();
        await gate;
        return stash.resolve(id);
      },
    };
    const reply = await expandLoop(upstream.call, held);
    const body = reply.body as Readable;
    body.resume();
    await lookup;
    body.destroy();
    expect((await reply.streamDone).aborted).toBe(true);
    release();
    // From the lookup's end to a continuation call is all promise continuations: once the
    // microtask queue has drained (a macrotask later), the loop has asked for one or never will.
    await new Promise((resolve) => setImmediate(resolve));
    expect(stash.lookups).toEqual([HASH]);
    expect(upstream.sent).toEqual([]);
  });
});
