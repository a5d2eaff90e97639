// A warm turn's index is seeded with the previous turn's prefix and walks only the text's last
// piece; it must find every span the full walk of the same body as one string finds. Bodies vary
// in whitespace, member order (keys before and after `messages`), duplicates and escapes.
import { BodyText } from '../../../libs/engine/src/wire/body-text';
import { RawIndex } from '../../../libs/engine/src/wire/raw-index';
import { elementAt, member, members, spanAt } from '../../../libs/engine/src/wire/text-scan';
import { mulberry32, type Rng } from '../../support/prng';

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
const ws = (rng: Rng) => pick(rng, ['', ' ', '\n  ', '\t', '\r\n    ']);

function message(rng: Rng, i: number): string {
  const text = JSON.stringify(`${pick(rng, ['ok', 'FAILED', 'é 🚀', 'a "q" \\ b', '}]{['])} ${i}`);
  const content = pick(rng, [text, `[${ws(rng)}{"type":"text",${ws(rng)}"text":${text}}]`]);
  return `{${ws(rng)}"role":${ws(rng)}"${pick(rng, ['user', 'assistant', 'tool'])}",${ws(rng)}"content":${ws(rng)}${content}${ws(rng)}}`;
}

function body(rng: Rng, msgs: readonly string[], tail: string, head: string): string {
  return `${ws(rng)}{${head}"messages":${ws(rng)}[${msgs.map((m) => ws(rng) + m).join(',')}${ws(rng)}]${tail}}${ws(rng)}`;
}

const heads = ['', '"model":"m",', '"model":"m", "system" : [{"type":"text","text":"s"}],\n', '"\\u006dodel":1,"model":2,'];
const tails = ['', ',"tools":[{"name":"t"}]', ',\n "stream": true, "model":"late"', ',"tool\\u0073":[]', ',"messages2":[]'];

describe('a seeded index', () => {
  it("finds what the full walk finds, in a text cut at the shared prefix's end", () => {
    const rng = mulberry32(2026);
    for (let c = 0; c < 300; c++) {
      const first = Array.from({ length: 1 + Math.floor(rng() * 5) }, (_, i) => message(rng, i));
      const head = pick(rng, heads);
      const a = body(rng, first, pick(rng, tails), head);
      const prev = new RawIndex(a);
      const k = 1 + Math.floor(rng() * first.length);
      // The next turn: the same bytes through message k, then anything.
      const cut = prev.message(k - 1)!.end;
      const added = Array.from({ length: Math.floor(rng() * 3) }, (_, i) => message(rng, 10 + i));
      const rest = `${added.map((m) => `,${ws(rng)}${m}`).join('')}${ws(rng)}]${pick(rng, tails)}}`;
      const b = a.slice(0, cut) + rest;
      const text = BodyText.of(a).prefixPlus(cut, rest);
      const seeded = new RawIndex(text, prev.seedFor(k)!);
      const full = new RawIndex(b);
      const keys = ['model', 'system', 'messages', 'tools', 'stream', 'messages2', 'absent'];
      expect(keys.map((key) => seeded.topLevel(key))).toEqual(keys.map((key) => full.topLevel(key)));
      expect(seeded.messageCount()).toBe(full.messageCount());
      for (let i = 0; i < full.messageCount(); i++) {
        const span = full.message(i)!;
        expect(seeded.message(i)).toEqual(span);
        // Scans inside a message read its own piece and give the full text's positions.
        expect(members(text, span.start)).toEqual(members(BodyText.of(b), span.start));
        const content = member(text, span.start, 'content');
        expect(content).toEqual(member(BodyText.of(b), span.start, 'content'));
        if (b[content!.start] === '[') expect(elementAt(text, content!.start, 0)).toEqual(spanAt(BodyText.of(b), span, ['content', 0]));
      }
      expect(seeded.insertionPoint()).toEqual(full.insertionPoint());
    }
  });

  it('reads a value that spans pieces (the messages array) from the whole text instead', () => {
    const a = '{"messages":[{"a":1},{"b":2}],"x":1}';
    const cut = a.indexOf('},') + 1;
    const text = BodyText.of(a).prefixPlus(cut, a.slice(cut));
    expect(text.pieceCount).toBe(2);
    expect(member(text, 0, 'x')).toEqual(member(BodyText.of(a), 0, 'x'));
    expect(elementAt(text, a.indexOf('['), 1)).toEqual({ start: a.indexOf('{"b"'), end: a.indexOf('}]') + 1 });
  });

  it('has no seed to offer when `messages` is not an array', () => {
    expect(new RawIndex('{"messages":"x"}').seedFor(1)).toBeNull();
    expect(new RawIndex('{"messages":[{}]}').seedFor(2)).toBeNull();
  });
});
