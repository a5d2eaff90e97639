// A warm turn's upstream body is built as byte chunks (the previous turn's bytes for the reused
// prefix plus the newly encoded rest). Those chunks must be, byte for byte, what encoding the whole
// output string gives: any chunk cut one byte off changes the bytes a provider cached.
import { isUtf8 } from 'node:buffer';
import { upstreamBytes } from '../../../libs/engine/src/upstream-body';
import { prepareRequest } from '../../../libs/engine/src/prepare-request';
import { createTenantRuntime } from '../../../libs/engine/src/tenancy/tenant-runtime';
import { appendText, chunksOf, chunkText, cutChunks } from '../../../libs/engine/src/wire/out-chunks';
import { TurnCache } from '../../../libs/engine/src/wire/turn-cache';
import { agentSteps, anthropicTurn, openaiTurn } from '../../support/transcripts';
import { turnDeps, withMovingBreakpoint } from '../../support/turn-fixtures';

const whole = (b: Buffer | readonly Buffer[]) => Buffer.concat([b].flat());

describe('the chunked upstream body', () => {
  for (const dialect of ['openai', 'anthropic'] as const) {
    it(`${dialect}: every turn's chunks are the full path's bytes, and each chunk is whole characters`, async () => {
      // Multi-byte characters in half the tool outputs (offloaded or kept), at every offset parity.
      const steps = agentSteps(40, dialect === 'openai' ? 5 : 6).map((s, i) =>
        i % 2 ? { ...s, output: `${'é'.repeat(i % 3)}${s.output}\nünïcödé ✓ 🚀 ${i}` } : s,
      );
      const tenant = createTenantRuntime('t', { preset: 'agent' }, 1);
      const cache = new TurnCache();
      const [fast, full] = [turnDeps(cache), turnDeps()];
      let chunked = 0;
      for (let t = 1; t <= 40; t++) {
        const body = dialect === 'openai' ? openaiTurn(steps, t) : withMovingBreakpoint(anthropicTurn(steps, t));
        const bytes = Buffer.from(JSON.stringify(body));
        const input = (raw: string) => ({
          route: dialect,
          dialect,
          raw,
          bytes,
          tenant,
          pipeline: tenant.built.pipeline,
          cacheMode: 'auto' as const,
          sessionHeader: 's',
          bypassHeader: false,
        });
        const text = cache.text(dialect, bytes, tenant.id);
        const raw = text.whole();
        const [a, b] = [await prepareRequest(fast, { ...input(raw), text }), await prepareRequest(full, input(bytes.toString('utf8')))];
        const sent = upstreamBytes(a, raw, bytes);
        expect(whole(sent).equals(Buffer.from(b.outgoing))).toBe(true);
        if (Array.isArray(sent)) {
          for (const c of sent) expect(isUtf8(c)).toBe(true);
          if (sent.length > 1) chunked++;
        }
      }
      // Most warm turns went out as chunks (so the comparison above covered them).
      expect(chunked).toBeGreaterThan(30);
      expect(cache.hits).toBeGreaterThan(30);
    });
  }

  it('a cut at any character keeps exactly that text and its bytes, across pieces', () => {
    let c = chunksOf('ab€d🚀');
    for (const piece of ['xÿz', 'plain', '🚀🚀é', 'q']) c = appendText(c, piece);
    const text = chunkText(c);
    expect(Buffer.concat(c.bytes).equals(Buffer.from(text))).toBe(true);
    for (let k = 0; k <= text.length; k++) {
      // Never between the halves of a surrogate pair (the turn cache cuts after ASCII only).
      if (k > 0 && k < text.length && text.charCodeAt(k - 1) >= 0xd800 && text.charCodeAt(k - 1) < 0xdc00) continue;
      const cut = cutChunks(c, k)!;
      expect(chunkText(cut)).toBe(text.slice(0, k));
      expect(Buffer.concat(cut.bytes).equals(Buffer.from(text.slice(0, k)))).toBe(true);
    }
    expect(cutChunks(c, text.length + 1)).toBeNull();
  });

  it('keeps few pieces over a long session (small trailing pieces are merged)', () => {
    let c = chunksOf('x'.repeat(100_000));
    for (let t = 0; t < 300; t++) c = appendText(cutChunks(c, chunkText(c).length - 3)!, `${'é'.repeat(t % 7)}turn ${t}]}`);
    expect(c.bytes.length).toBeLessThanOrEqual(16);
    expect(Buffer.concat(c.bytes).equals(Buffer.from(chunkText(c)))).toBe(true);
  });
});
