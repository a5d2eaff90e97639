// No walk over request data may depend on its nesting depth: the decoder refuses depth beyond
// MAX_JSON_DEPTH with a precise 400, and the walks that see text decoded later (tool arguments,
// model output) stay bounded or iterative.
import { buildPipeline, countTokens, depthViolation, MAX_JSON_DEPTH } from '@context-guru/components';
import { jsonContained } from '../../../libs/components/src/offload/extract/subsequence';
import { decodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { deepEqual } from '../../../libs/engine/src/wire/splice';
import { TurnCache } from '../../../libs/engine/src/wire/turn-cache';
import { WireError } from '../../../libs/engine/src/wire/wire.types';
import { testCtx } from '../../support/ctx';

const nested = (n: number) => '['.repeat(n) + ']'.repeat(n);
const deepValue = () => JSON.parse(nested(100_000)) as unknown;

describe('depthViolation', () => {
  it('finds the first bracket past the limit and ignores brackets inside strings', () => {
    expect(depthViolation(nested(MAX_JSON_DEPTH))).toBe(-1);
    expect(depthViolation(nested(MAX_JSON_DEPTH + 1))).toBe(MAX_JSON_DEPTH);
    expect(depthViolation(JSON.stringify({ s: nested(1000) }))).toBe(-1);
  });
});

describe('decodeRequest', () => {
  it('refuses 100,000 nested arrays with a 400 naming the position', () => {
    const raw = `{"model":"m","messages":[{"role":"user","content":${nested(100_000)}}]}`;
    let err: unknown;
    try {
      decodeRequest('openai', raw);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(WireError);
    expect((err as WireError).status).toBe(400);
    expect((err as WireError).message).toMatch(/nesting deeper than 128 levels at position \d+/);
  });

  it('refuses depth that arrives on a warm turn the turn cache extends', () => {
    const cache = new TurnCache();
    const first = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'ok' },
    ];
    const raw1 = JSON.stringify({ model: 'm', messages: first });
    const encoded = cache.decode('openai', raw1, 't');
    cache.encode(encoded, encoded.view.messages, { injectExpand: false }, 't');
    const raw2 = `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"},{"role":"user","content":${nested(500)}}]}`;
    expect(() => cache.decode('openai', raw2, 't')).toThrow(/nesting deeper/);
  });
});

describe('bounded walks', () => {
  it('deepEqual answers on values deeper than any request may be', () => {
    expect(deepEqual(deepValue(), deepValue())).toBe(false);
    expect(deepEqual(JSON.parse(nested(50)), JSON.parse(nested(50)))).toBe(true);
  });

  it('extract containment declines deep model output instead of overflowing the stack', () => {
    expect(jsonContained(deepValue(), deepValue())).toBe(false);
  });

  it('extract reads deeply nested tool-call arguments without failing', async () => {
    const args = `{"command":"grep timeout app.log","deep":${nested(100_000)}}`;
    const log = Array.from({ length: 400 }, (_, i) => (i % 50 === 7 ? `ERROR request ${i} timeout` : `INFO request ${i} ok`)).join('\n');
    const messages = [
      { role: 'user' as const, content: 'why do requests time out?' },
      { role: 'assistant' as const, content: null, tool_calls: [{ id: 'c1', name: 'bash', arguments: args }] },
      { role: 'tool' as const, tool_call_id: 'c1', content: log },
      { role: 'user' as const, content: 'go on' },
    ];
    const { pipeline } = buildPipeline({ pipeline: ['extract'] });
    const result = await pipeline.run(messages, testCtx());
    expect(result.reports[0]!.error).toBeUndefined();
  });

  it('counts a long run of one character class in bounded pieces', () => {
    // o200k's merges are quadratic within one pre-token: 200 KB of '[' took ~30 s unsplit.
    expect(countTokens('['.repeat(200_000))).toBe(100_000);
  });
});
