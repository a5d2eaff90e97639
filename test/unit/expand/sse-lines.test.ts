import { SseDecoder, SseLineSplitter, parseSseEvents, eventJson } from '../../../libs/engine/src/expand/sse-lines';
import { chunked, cutAt } from '../../support/fake-upstream-sse';

function splitAll(parts: Buffer[]): string[] {
  const s = new SseLineSplitter();
  const lines = parts.flatMap((p) => s.push(p));
  const last = s.end();
  return last === null ? lines : [...lines, last];
}

describe('SseLineSplitter', () => {
  it('cuts LF, CRLF and lone CR lines alike', () => {
    expect(splitAll([Buffer.from('a\nb\r\nc\rd')])).toEqual(['a', 'b', 'c', 'd']);
  });

  it('treats a CRLF split across two chunks as one terminator', () => {
    expect(splitAll(cutAt('one\r\ntwo\r\n\r\n', [4]))).toEqual(['one', 'two', '']);
  });

  it('keeps a UTF-8 character intact when a chunk boundary falls inside it', () => {
    const text = 'data: naïve — ✓ 日本語 🚀\n';
    for (let size = 1; size <= 5; size++) expect(splitAll(chunked(text, size))).toEqual(['data: naïve — ✓ 日本語 🚀']);
  });

  it('bounds an unterminated line and counts what it dropped', () => {
    const s = new SseLineSplitter(8);
    expect(s.push(Buffer.from('0123456789abcdef'))).toEqual([]);
    expect(s.push(Buffer.from('\nok\n'))).toEqual(['01234567', 'ok']);
    expect(s.dropped).toBe(8);
  });
});

describe('SSE events', () => {
  it('joins data lines, skips comments and carries the event name', () => {
    const evs = parseSseEvents(': keep-alive\nevent: ping\ndata: {"a":\ndata: 1}\n\ndata:[DONE]\n\n');
    expect(evs).toEqual([
      { event: 'ping', data: '{"a":\n1}' },
      { event: 'message', data: '[DONE]' },
    ]);
    expect(eventJson(evs[0]!)).toEqual({ a: 1 });
    expect(eventJson(evs[1]!)).toBeUndefined();
  });

  it('decodes the same events whatever the chunking', () => {
    const text = 'event: content_block_delta\r\ndata: {"text":"héllo"}\r\n\r\nevent: message_stop\r\ndata: {"type":"message_stop"}\r\n\r\n';
    const whole = parseSseEvents(text);
    for (let size = 1; size <= 9; size++) {
      const dec = new SseDecoder();
      const got = [...chunked(text, size).flatMap((c) => dec.push(c)), ...dec.end()];
      expect(got).toEqual(whole);
    }
    expect(whole.map((e) => e.event)).toEqual(['content_block_delta', 'message_stop']);
  });

  it('hands back an event left open at EOF on end()', () => {
    const dec = new SseDecoder();
    expect(dec.push(Buffer.from('data: {"type":"message_stop"}'))).toEqual([]);
    expect(dec.end()).toEqual([{ event: 'message', data: '{"type":"message_stop"}' }]);
  });
});
