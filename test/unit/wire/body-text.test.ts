// A body's text as pieces must read exactly as the one string it stands for: every character,
// every slice, every substring search (across piece boundaries too), whatever the cuts.
import { BodyText } from '../../../libs/engine/src/wire/body-text';
import { mulberry32 } from '../../support/prng';

const ALPHABET = 'ab1h,{}[]"é🚀 \n';

function randomString(rand: () => number, n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += ALPHABET[Math.floor(rand() * ALPHABET.length)];
  return out;
}

/** The text built as a warm turn builds it: a first piece, then repeated cut-and-append. */
function built(rand: () => number): { text: BodyText; whole: string } {
  let whole = randomString(rand, 20 + Math.floor(rand() * 40));
  let text = BodyText.of(whole);
  for (let turn = 0; turn < 6; turn++) {
    const end = 1 + Math.floor(rand() * whole.length);
    const rest = randomString(rand, Math.floor(rand() * 30));
    text = text.prefixPlus(end, rest);
    whole = whole.slice(0, end) + rest;
  }
  return { text, whole };
}

describe('BodyText', () => {
  it('reads as the string it stands for: length, characters, slices and the whole', () => {
    const rand = mulberry32(7);
    for (let c = 0; c < 200; c++) {
      const { text, whole } = built(rand);
      expect(text.length).toBe(whole.length);
      expect(text.whole()).toBe(whole);
      for (let i = 0; i < whole.length; i++) {
        expect([i, text.charCodeAt(i), text.charAt(i)]).toEqual([i, whole.charCodeAt(i), whole.charAt(i)]);
      }
      for (let k = 0; k < 20; k++) {
        const a = Math.floor(rand() * (whole.length + 2)) - 1;
        const b = Math.floor(rand() * (whole.length + 2)) - 1;
        expect([a, b, text.slice(a, b)]).toEqual([a, b, whole.slice(Math.max(0, a), Math.max(0, b))]);
      }
      expect(text.slice(3)).toBe(whole.slice(3));
    }
  });

  it('finds the first occurrence of a substring wherever it lies, straddling a boundary included, and only after `from`', () => {
    const rand = mulberry32(11);
    for (let c = 0; c < 200; c++) {
      const { text, whole } = built(rand);
      for (const needle of ['1h', 'h,', '{}', 'é🚀', 'ab1h', ' \n"', 'zz']) {
        const from = Math.floor(rand() * whole.length);
        expect([needle, from, text.indexOf(needle, from)]).toEqual([needle, from, whole.indexOf(needle, from)]);
        expect(text.indexOf(needle)).toBe(whole.indexOf(needle));
      }
    }
  });

  it('cuts pieces at the prefix end, keeping earlier pieces as they were', () => {
    const text = BodyText.of('0123456789').prefixPlus(4, 'abcdef').prefixPlus(7, 'XY');
    expect(text.whole()).toBe('0123abcXY');
    expect(text.pieceCount).toBe(3);
    expect(text.local(5)).toEqual({ s: 'abc', at: 4 });
    expect(text.local(text.length)).toEqual({ s: 'XY', at: 7 });
    // A prefix ending exactly at a piece boundary keeps the piece whole.
    expect(text.prefixPlus(4, 'Z').whole()).toBe('0123Z');
    expect(text.prefixPlus(4, 'Z').pieceCount).toBe(2);
    expect(() => text.prefixPlus(0, 'x')).toThrow(RangeError);
    expect(() => text.prefixPlus(10, 'x')).toThrow(RangeError);
  });

  it('trims its last piece to a copy of exactly the characters up to a position, and only then', () => {
    const head = BodyText.of('{"messages":[{"a":1}');
    const text = head.prefixPlus(20, ',{"bbbbbbbbbbbbbbbb":2}],"tools":[{"name":"x"}]}');
    const end = text.whole().indexOf(']');
    const copies: Array<[number, number]> = [];
    const copy = (a: number, b: number) => (copies.push([a, b]), text.whole().slice(a, b));
    const trimmed = text.trimmedTo(end, copy);
    expect(copies).toEqual([[20, end]]);
    expect(trimmed.whole()).toBe(text.whole().slice(0, end));
    expect(trimmed.pieceCount).toBe(2);
    // A copy that is not the characters asked for is refused: the text stays as it was.
    expect(text.trimmedTo(end, () => 'wrong')).toBe(text);
    // Nothing to trim: a single piece, an end that is already the piece's end, or a part so short
    // that V8 copies it on slicing anyway.
    expect(head.trimmedTo(10, copy)).toBe(head);
    expect(text.trimmedTo(text.length, copy)).toBe(text);
    expect(text.trimmedTo(25, copy)).toBe(text);
    expect(copies).toHaveLength(1);
  });
});
