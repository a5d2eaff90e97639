// Random but valid request bodies rendered from parts whose tool-output strings are "slots": the
// expected output of any rewrite is the same rendering with those slots re-encoded, so a test can
// predict every byte the encoder must produce.
export type Part = string | { slot: number } | Part[];

export interface SlotDef {
  text: string;
  encode: (s: string) => string;
}

export interface Generated {
  root: Part;
  /** One Part per body message, in order. */
  messages: Part[];
  slots: SlotDef[];
}

export { mulberry32, type Rng } from './prng';
import type { Rng } from './prng';

export const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
export const int = (rng: Rng, lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));

const WS = ['', '', ' ', '\n  ', '\t', '\r\n', '  '];
const PIECES = [
  'PASS',
  'FAILED tests/test_x.py::test_y',
  'é',
  '😀',
  '"quoted"',
  '\\back\\slash',
  '\n',
  '\t',
  '</script>',
  '\u2028',
  'ok ',
  '<<cg:abc123>>',
  '{"json":[1,2]}',
  '\u0000',
  '\ud800',
  '日本語',
  '   ',
  '/path/to/file.ts:12:5',
];

export function randomText(rng: Rng): string {
  let s = '';
  for (let i = int(rng, 0, 12); i > 0; i--) s += pick(rng, PIECES);
  return rng() < 0.2 ? s + 'x'.repeat(int(rng, 1, 3000)) : s;
}

/** JSON with every non-ASCII char and some ASCII letters as \u escapes and `/` as `\/`: valid, but not what JSON.stringify writes. */
function heavyEscape(rng: Rng): (s: string) => string {
  const letters = rng() < 0.5;
  const u = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  return (s) => {
    let out = '"';
    for (const c of s.split('')) {
      if (c === '"' || c === '\\') out += `\\${c}`;
      else if (c === '/') out += '\\/';
      else if (c < ' ' || c > '~' || (letters && c >= 'a' && c <= 'e')) out += u(c);
      else out += c;
    }
    return `${out}"`;
  };
}

export class Render {
  readonly slots: SlotDef[] = [];
  constructor(readonly rng: Rng) {}

  ws(): string {
    return pick(this.rng, WS);
  }

  slot(text: string): Part {
    const encode = this.rng() < 0.5 ? JSON.stringify : heavyEscape(this.rng);
    this.slots.push({ text, encode });
    return { slot: this.slots.length - 1 };
  }

  str(s: string): Part {
    return this.rng() < 0.3 ? heavyEscape(this.rng)(s) : JSON.stringify(s);
  }

  /** An object with shuffled key order and random whitespace. */
  obj(entries: [string, Part][], shuffle = true): Part {
    const list = [...entries];
    if (shuffle) list.sort(() => this.rng() - 0.5);
    const out: Part[] = ['{', this.ws()];
    list.forEach(([k, v], i) => {
      if (i) out.push(',', this.ws());
      out.push(this.str(k), this.ws(), ':', this.ws(), v, this.ws());
    });
    out.push('}');
    return out;
  }

  arr(items: Part[]): Part {
    const out: Part[] = ['[', this.ws()];
    items.forEach((v, i) => {
      if (i) out.push(',', this.ws());
      out.push(v, this.ws());
    });
    out.push(']');
    return out;
  }

  /** Unknown fields a re-serializer would alter. */
  junk(): [string, Part][] {
    const opts: [string, Part][] = [
      ['seed', '12345678901234567890'],
      ['x_float', '-0.0E+10'],
      ['x_nested', this.arr([this.arr([this.str('é😀'), 'null']), '1e400', this.obj([['k', 'true']])])],
      ['x_escaped', String.raw`"\u0041\ud83d\ude00\/"`],
    ];
    return opts.filter(() => this.rng() < 0.5);
  }
}

export function flatten(p: Part, slots: readonly SlotDef[], overrides: ReadonlyMap<number, string>): string {
  if (typeof p === 'string') return p;
  if (Array.isArray(p)) return p.map((x) => flatten(x, slots, overrides)).join('');
  const s = slots[p.slot]!;
  return overrides.has(p.slot) ? JSON.stringify(overrides.get(p.slot)) : s.encode(s.text);
}
