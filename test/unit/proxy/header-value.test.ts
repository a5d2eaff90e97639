// One headerValue for inbound (Node) and upstream (undici) headers. There were two: the proxy's read
// `h[name]` exactly and took the first of repeated values, the expand loop's matched any case and
// joined them — so the same header set could read as an event stream in one place and not the other.
import { isEventStream } from '../../../apps/gateway/src/expand/expand-loop';
import { headerValue, upstreamRequestHeaders } from '../../../apps/gateway/src/http/forward-headers';

describe('headerValue', () => {
  it('matches the name whatever its case', () => {
    expect(headerValue({ 'Content-Type': 'text/event-stream' }, 'content-type')).toBe('text/event-stream');
    expect(headerValue({ 'x-context-guru-session': 'abc' }, 'x-context-guru-session')).toBe('abc');
    expect(headerValue({ other: 'x' }, 'x-context-guru-session')).toBeUndefined();
  });

  it('reads a repeated header as its values joined, the way the forward sends it upstream', () => {
    const h = { 'x-trace': ['a', 'b'] };
    expect(headerValue(h, 'x-trace')).toBe('a, b');
    expect(headerValue(h, 'x-trace')).toBe(upstreamRequestHeaders(h)['x-trace']);
  });

  it('gives the expand loop and the proxy the same reading of one reply', () => {
    const upstream = { 'Content-Type': ['text/event-stream', 'charset=utf-8'] };
    expect(isEventStream(upstream)).toBe(true);
    expect(headerValue(upstream, 'content-type')).toBe('text/event-stream, charset=utf-8');
  });
});
