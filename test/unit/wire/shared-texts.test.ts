// Decoding hands the pipeline one string instance per distinct text (shareTexts) so memo look-ups
// compare pointers, not contents. Instance identity is not observable from JS; what is checked
// here is that sharing never changes a text, a block or a forwarded byte.
import { shareTexts, sharedText, type Message } from '@context-guru/components';
import { decodeRequest, encodeRequest } from '../../../libs/engine/src/wire/request.wire';

const big = (seed: string) => `${seed}\n`.repeat(400);

describe('shareTexts', () => {
  it('keeps every text equal and leaves non-text blocks and short texts alone', () => {
    const image = { type: 'image', source: { type: 'base64', data: 'xx' } };
    const messages: Message[] = [
      { role: 'tool', tool_call_id: 'a', content: big('one') },
      { role: 'user', content: [{ type: 'text', text: big('two'), cache_control: { type: 'ephemeral' } }, image] },
      { role: 'assistant', content: 'short' },
      { role: 'assistant', content: null },
    ];
    const before = structuredClone(messages);
    shareTexts(messages);
    expect(messages).toEqual(before);
    expect(messages[1]?.content).toHaveLength(2);
    expect((messages[1]?.content as unknown[])[1]).toBe(image);
  });

  it('answers the first text seen for any equal text', () => {
    const first = big('same');
    expect(sharedText(first)).toBe(first);
    expect(sharedText(big('same'))).toBe(first);
    expect(sharedText('tiny')).toBe('tiny');
  });

  it('decodes a transcript that repeats an output to the same messages and bytes as before', () => {
    const out = big('pytest -q\n3 passed');
    const body = JSON.stringify({
      model: 'm',
      messages: [
        { role: 'user', content: 'run the tests twice' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'sh', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: out },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c2', type: 'function', function: { name: 'sh', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c2', content: out },
      ],
    });
    const view = decodeRequest('openai', body);
    expect(view.messages[2]?.content).toBe(out);
    expect(view.messages[4]?.content).toBe(out);
    expect(view.messages).toEqual(view.original);
    expect(encodeRequest(view, view.messages, { injectExpand: false }).raw).toBe(body);
  });
});
