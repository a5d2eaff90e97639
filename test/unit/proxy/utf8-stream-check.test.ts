import { isUtf8 } from 'node:buffer';
import { firstInvalidUtf8 } from '../../../apps/gateway/src/http/body-checks';
import { Utf8StreamCheck } from '../../../apps/gateway/src/http/utf8-stream-check';
import { mulberry32 } from '../../support/prng';

/** Feeds `body` cut at the given offsets; returns the checker's verdict and offset. */
function check(body: Buffer, cuts: number[]): { ok: boolean; at: number } {
  const c = new Utf8StreamCheck();
  let from = 0;
  let ok = true;
  for (const cut of [...cuts, body.length]) {
    ok = c.push(body.subarray(from, cut)) && ok;
    from = cut;
  }
  ok = c.end() && ok;
  return { ok, at: c.invalidAt };
}

const text = Buffer.from('plain ascii, é, 漢字, 🎉 and more: ünïcödé 𝄞 end', 'utf8');

describe('UTF-8 checked across the chunks of a streamed body', () => {
  it('accepts valid UTF-8 however it is cut, including inside multi-byte sequences', () => {
    for (let a = 0; a <= text.length; a++) {
      for (let b = a; b <= text.length; b += 3) expect([a, b, check(text, [a, b]).ok]).toEqual([a, b, true]);
    }
  });

  it('finds the same first invalid byte as the whole-body check, wherever the cut', () => {
    const bad = Buffer.concat([text.subarray(0, 20), Buffer.from([0xe6, 0x28]), text.subarray(20)]);
    const whole = firstInvalidUtf8(bad);
    for (let a = 0; a <= bad.length; a++) expect([a, check(bad, [a])]).toEqual([a, { ok: false, at: whole }]);
  });

  it('rejects a sequence left incomplete at the end of the body', () => {
    const cut = Buffer.concat([text, Buffer.from([0xf0, 0x9f])]);
    expect(check(cut, [cut.length - 1]).ok).toBe(false);
    expect(check(cut, []).at).toBe(text.length);
  });

  it('agrees with isUtf8 on random byte soup cut at random places', () => {
    const rnd = mulberry32(7);
    for (let n = 0; n < 300; n++) {
      const body = Buffer.from(
        Array.from({ length: 1 + Math.floor(rnd() * 40) }, () => (rnd() < 0.7 ? 0x41 + Math.floor(rnd() * 20) : Math.floor(rnd() * 256))),
      );
      const cuts = [Math.floor(rnd() * body.length), Math.floor(rnd() * body.length)].sort((x, y) => x - y);
      expect(check(body, cuts).ok).toBe(isUtf8(body));
    }
  });
});
