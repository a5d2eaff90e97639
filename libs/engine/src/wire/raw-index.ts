// The top level of a body, walked once on first use, with positions in the body's text: every
// member's value span (last duplicate wins, as JSON.parse) and the element spans of `messages`.
import { CLOSE_OBJ, OPEN_ARR, OPEN_OBJ, skipString } from '@context-guru/components';
import { BodyText } from './body-text';
import { decodeKey, elements, skipValue, skipWs, type Span } from './json-scan';
import { elementsAfter as textElementsAfter } from './text-scan';

/** What a previous turn's walk learned about the identical prefix of this body. */
export interface MessageSeed {
  /** Where the `messages` array opens ('['). */
  arrayStart: number;
  /** Spans of its first elements, in this body's coordinates. */
  spans: readonly Span[];
  /** Where the root object opens, and its members before `messages` (in order, duplicates included). */
  head?: { root: number; members: ReadonlyArray<readonly [string, Span]> };
}

/**
 * The top level of the body, walked once on first use: every member's value span (last duplicate
 * wins) and the element spans of `messages`, recorded during that same walk. Seeded with a previous
 * turn's prefix, the walk starts after its last shared message: the members before `messages` and
 * those messages are known, the rest lies in the text's last piece (body-text.ts).
 */
export class RawIndex {
  readonly text: BodyText;
  private walked = false;
  private readonly top = new Map<string, Span>();
  /** Members met before `messages`, in order (a later turn's seed). */
  private readonly head: Array<readonly [string, Span]> = [];
  private msgs: Span[] = [];
  private arrayStart = -1;
  private rootSpan: Span = { start: 0, end: 0 };
  private lastEnd = -1;

  constructor(
    raw: string | BodyText,
    private readonly seed?: MessageSeed,
    /** The top-level array whose elements are indexed: `messages`, or the Responses API's `input`. */
    readonly listKey = 'messages',
  ) {
    this.text = typeof raw === 'string' ? BodyText.of(raw) : raw;
  }

  private walk(): void {
    if (this.walked) return;
    this.walked = true;
    const seed = this.seed;
    const lastSeeded = seed?.spans.at(-1);
    if (seed?.head && lastSeeded) return this.walkAfter(seed, seed.head, lastSeeded);
    const raw = this.text.whole();
    const root = skipWs(raw, 0);
    if (raw.charCodeAt(root) !== OPEN_OBJ) throw new Error('body is not an object');
    this.rootSpan = { start: root, end: root + 1 };
    this.walkMembers(raw, 0, skipWs(raw, root + 1));
  }

  /** The seeded prefix as known, then the messages after it and the members after them. */
  private walkAfter(seed: MessageSeed, head: NonNullable<MessageSeed['head']>, lastSeeded: Span): void {
    this.rootSpan = { start: head.root, end: head.root + 1 };
    for (const [key, span] of head.members) this.record(key, span);
    this.arrayStart = seed.arrayStart;
    this.msgs = [...seed.spans, ...textElementsAfter(this.text, lastSeeded.end)];
    const { s, at } = this.text.local(this.msgs.at(-1)?.end ?? lastSeeded.end);
    const end = skipWs(s, (this.msgs.at(-1)?.end ?? lastSeeded.end) - at) + 1;
    this.record(this.listKey, { start: seed.arrayStart, end: end + at });
    this.walkMembers(s, at, this.afterValue(s, end));
  }

  /** Past the separator after a value ending at `end` (local): the next key, or the closing brace. */
  private afterValue(raw: string, end: number): number {
    const i = skipWs(raw, end);
    return raw.charCodeAt(i) === CLOSE_OBJ ? i : skipWs(raw, i + 1);
  }

  /** Members from local position `i` (a key, or the closing brace) of `raw`, which starts at `base` in the text. */
  private walkMembers(raw: string, base: number, i: number): void {
    while (raw.charCodeAt(i) !== CLOSE_OBJ) {
      if (i >= raw.length) throw new Error('unterminated body object');
      const keyEnd = skipString(raw, i);
      const key = decodeKey(raw, i, keyEnd);
      const start = skipWs(raw, skipWs(raw, keyEnd) + 1);
      let end: number;
      if (key === this.listKey && raw.charCodeAt(start) === OPEN_ARR) {
        this.arrayStart = start + base;
        this.msgs = elements(raw, start).map((e) => ({ start: e.start + base, end: e.end + base }));
        end = skipWs(raw, (this.msgs.at(-1)?.end ?? start + 1 + base) - base) + 1;
      } else {
        if (key === this.listKey) this.msgs = [];
        end = skipValue(raw, start);
      }
      this.record(key, { start: start + base, end: end + base });
      i = this.afterValue(raw, end);
    }
    this.rootSpan = { start: this.rootSpan.start, end: i + base + 1 };
  }

  private record(key: string, span: Span): void {
    this.top.set(key, span);
    this.lastEnd = span.end;
    if (this.arrayStart < 0 && key !== this.listKey) this.head.push([key, span]);
  }

  topLevel(key: string): Span | undefined {
    this.walk();
    return this.top.get(key);
  }

  message(i: number): Span | undefined {
    this.walk();
    return this.msgs[i];
  }

  messageCount(): number {
    this.walk();
    return this.msgs.length;
  }

  /**
   * What a later body sharing this one's first `k` messages byte for byte knows of itself: the
   * members before `messages` and those messages' spans (null when `messages` is not an array).
   */
  seedFor(k: number): MessageSeed | null {
    this.walk();
    if (this.arrayStart < 0 || k < 1 || k > this.msgs.length) return null;
    return { arrayStart: this.arrayStart, spans: this.msgs.slice(0, k), head: { root: this.rootSpan.start, members: this.head } };
  }

  /** Where a new top-level member can be inserted (just past the last member's value), and whether a comma is needed. */
  insertionPoint(): { at: number; comma: boolean } {
    this.walk();
    return this.lastEnd < 0 ? { at: this.rootSpan.start + 1, comma: false } : { at: this.lastEnd, comma: true };
  }
}
