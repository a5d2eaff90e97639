// One "same message" for the pipeline, the encoder and the turn cache. The turn cache used a
// shallow compare that called {a, b: undefined} and {a, c} the same block, while the encoder saw a
// change: the turn cache would then have reused the previous turn's bytes for a changed message.
import { sameMessage as componentsSame, MAX_BREAKPOINTS as componentsMax, type Message } from '@context-guru/components';
import { MAX_BREAKPOINTS as wireMax } from '../../../libs/engine/src/wire/breakpoints';
import { sameMessage as wireSame } from '../../../libs/engine/src/wire/splice';

const msg = (blocks: Array<Record<string, unknown>>): Message => ({ role: 'user', content: blocks as Message['content'] });

describe('message equality', () => {
  it('is one function for the pipeline, the encoder and the turn cache', () => {
    expect(wireSame).toBe(componentsSame);
    expect(wireMax).toBe(componentsMax);
  });

  it('sees a block that gained a key where another held undefined', () => {
    expect(
      componentsSame(
        msg([{ type: 'text', text: 'x', a: undefined }]),
        msg([{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }]),
      ),
    ).toBe(false);
  });

  it('treats an undefined-valued key as absent and ignores key order', () => {
    expect(componentsSame(msg([{ type: 'text', text: 'x', extra: undefined }]), msg([{ text: 'x', type: 'text' }]))).toBe(true);
  });

  it('compares nested values structurally', () => {
    const a = msg([{ type: 'tool_result', content: [{ type: 'text', text: 'ok' }] }]);
    const b = msg([{ type: 'tool_result', content: [{ type: 'text', text: 'changed' }] }]);
    expect(componentsSame(a, b)).toBe(false);
    expect(componentsSame(a, msg([{ content: [{ text: 'ok', type: 'text' }], type: 'tool_result' }]))).toBe(true);
  });
});
