// A body read whole is exactly the bytes that arrived, however they were cut, with or without a
// declared length; one over the limit is refused; a declared body is copied into one buffer.
import { randomBytes } from 'node:crypto';
import { BodyCollector } from '../../../apps/gateway/src/http/body-collector';

function cuts(body: Buffer, seed: number): Buffer[] {
  const parts: Buffer[] = [];
  let at = 0;
  let x = seed;
  while (at < body.length) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const n = 1 + (x % 70_000);
    parts.push(body.subarray(at, at + n));
    at += n;
  }
  return parts;
}

describe('BodyCollector', () => {
  const body = randomBytes(300_000);

  it.each([1, 2, 3, 4, 5])('gives back the bytes as sent, declared or chunked (cut %i)', (seed) => {
    for (const declared of [body.length, -1]) {
      const c = new BodyCollector(declared, 1_000_000);
      for (const part of cuts(body, seed)) c.add(part);
      expect(c.done()!.equals(body)).toBe(true);
    }
  });

  it('copies a declared body into one buffer of its size, not the arriving chunks', () => {
    const parts = cuts(Buffer.from(body), 9);
    const c = new BodyCollector(body.length, 1_000_000);
    for (const part of parts) c.add(part);
    // A part is not needed once added (its bytes are already copied): zeroing every part before
    // the body is taken leaves it intact, where collecting parts to join at the end would not.
    for (const p of parts) p.fill(0);
    const out = c.done()!;
    expect(out.length).toBe(body.length);
    expect(parts.some((p) => p.buffer === out.buffer)).toBe(false);
    expect(out.equals(body)).toBe(true);
  });

  it('refuses a body over the limit, declared or not', () => {
    for (const declared of [body.length, -1]) {
      const c = new BodyCollector(declared, 100_000);
      for (const part of cuts(body, 3)) c.add(part);
      expect(c.done()).toBeNull();
    }
  });

  it('keeps correct when more or fewer bytes than declared arrive', () => {
    const more = new BodyCollector(1000, 1_000_000);
    for (const part of cuts(body.subarray(0, 5000), 7)) more.add(part);
    expect(more.done()!.equals(body.subarray(0, 5000))).toBe(true);
    const fewer = new BodyCollector(5000, 1_000_000);
    fewer.add(body.subarray(0, 1200));
    expect(fewer.done()!.equals(body.subarray(0, 1200))).toBe(true);
  });
});
