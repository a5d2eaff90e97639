// A malformed body is answered with the exact place it broke, worded the same on every Node
// version: this strict JSON grammar walk runs only after JSON.parse has already refused the text.

export interface JsonSyntaxError {
  pos: number;
  reason: string;
}

type State = 'value' | 'value_or_close' | 'key' | 'key_or_close' | 'colon' | 'after_value';

const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't', 'u']);

function show(ch: string): string {
  return JSON.stringify(ch);
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

/** Returns the index past a valid string starting at `i`, or the error. */
function scanString(raw: string, i: number): number | JsonSyntaxError {
  for (let j = i + 1; j < raw.length; j++) {
    const ch = raw.charAt(j);
    if (ch === '"') return j + 1;
    if (ch === '\\') {
      const e = raw[j + 1];
      if (e === undefined) break;
      if (!ESCAPES.has(e)) return { pos: j, reason: `bad escape \\${e} in string` };
      if (e === 'u') {
        const hex = raw.slice(j + 2, j + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) return { pos: j, reason: 'bad \\u escape in string' };
        j += 5;
      } else j++;
    } else if (ch.charCodeAt(0) < 0x20) {
      return { pos: j, reason: 'unescaped control character in string' };
    }
  }
  return { pos: raw.length, reason: `unterminated string starting at position ${i}` };
}

function scanNumber(raw: string, i: number): number | JsonSyntaxError {
  let j = i;
  if (raw[j] === '-') j++;
  if (raw[j] === '0') j++;
  else if (isDigit(raw[j])) while (isDigit(raw[j])) j++;
  else return { pos: j, reason: 'invalid number' };
  if (raw[j] === '.') {
    j++;
    if (!isDigit(raw[j])) return { pos: j, reason: 'invalid number: digit expected after the decimal point' };
    while (isDigit(raw[j])) j++;
  }
  if (raw[j] === 'e' || raw[j] === 'E') {
    j++;
    if (raw[j] === '+' || raw[j] === '-') j++;
    if (!isDigit(raw[j])) return { pos: j, reason: 'invalid number: digit expected in the exponent' };
    while (isDigit(raw[j])) j++;
  }
  return j;
}

/** Where the walk stands: the next index, the grammar state, and the containers still open. */
interface Walk {
  i: number;
  state: State;
  stack: string[];
}

/** One step from the current state at character `ch`: advances the walk, or returns the error. */
type Step = (raw: string, ch: string, w: Walk) => JsonSyntaxError | undefined;

const isSpace = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r';

function closeContainer(w: Walk): undefined {
  w.stack.pop();
  w.state = 'after_value';
  w.i++;
  return undefined;
}

/** A string, number or literal starting at `i`: the index past it, or the error. */
function scanScalar(raw: string, ch: string, i: number): number | JsonSyntaxError {
  if (ch === '"') return scanString(raw, i);
  if (ch === '-' || isDigit(ch)) return scanNumber(raw, i);
  const lit = ['true', 'false', 'null'].find((w) => raw.startsWith(w, i));
  return lit ? i + lit.length : { pos: i, reason: `unexpected character ${show(ch)}, expected a value` };
}

function value(raw: string, ch: string, w: Walk): JsonSyntaxError | undefined {
  if (ch === '{' || ch === '[') {
    w.stack.push(ch);
    w.state = ch === '{' ? 'key_or_close' : 'value_or_close';
    w.i++;
    return undefined;
  }
  const next = scanScalar(raw, ch, w.i);
  if (typeof next !== 'number') return next;
  w.i = next;
  w.state = 'after_value';
  return undefined;
}

function key(raw: string, ch: string, w: Walk): JsonSyntaxError | undefined {
  if (ch !== '"') return { pos: w.i, reason: `unexpected character ${show(ch)}, expected a double-quoted property name` };
  const next = scanString(raw, w.i);
  if (typeof next !== 'number') return next;
  w.i = next;
  w.state = 'colon';
  return undefined;
}

const STEPS: Record<State, Step> = {
  value,
  value_or_close: (raw, ch, w) => (ch === ']' ? closeContainer(w) : value(raw, ch, w)),
  key,
  key_or_close: (raw, ch, w) => (ch === '}' ? closeContainer(w) : key(raw, ch, w)),
  colon: (_raw, ch, w) => {
    if (ch !== ':') return { pos: w.i, reason: `unexpected character ${show(ch)}, expected ':' after a property name` };
    w.i++;
    w.state = 'value';
    return undefined;
  },
  after_value: (_raw, ch, w) => {
    const top = w.stack[w.stack.length - 1];
    if (top === undefined) return { pos: w.i, reason: `unexpected character ${show(ch)} after the JSON value` };
    const close = top === '{' ? '}' : ']';
    if (ch === ',') w.state = top === '{' ? 'key' : 'value';
    else if (ch === close) w.stack.pop();
    else return { pos: w.i, reason: `unexpected character ${show(ch)}, expected ',' or '${close}'` };
    w.i++;
    return undefined;
  },
};

/** The first syntax error of `raw`, or null when it is valid JSON. Iterative: nesting depth is unbounded. */
export function locateSyntaxError(raw: string): JsonSyntaxError | null {
  const w: Walk = { i: 0, state: 'value', stack: [] };
  for (;;) {
    while (isSpace(raw[w.i])) w.i++;
    const ch = raw[w.i];
    if (ch === undefined) {
      return w.state === 'after_value' && w.stack.length === 0 ? null : { pos: raw.length, reason: 'unexpected end of input' };
    }
    const err = STEPS[w.state](raw, ch, w);
    if (err) return err;
  }
}

/** "malformed JSON at position N (line L, column C): reason" — line and column are 1-based. */
export function describeSyntaxError(raw: string, err: JsonSyntaxError): string {
  let line = 1;
  let lineStart = 0;
  for (let j = raw.indexOf('\n'); j >= 0 && j < err.pos; j = raw.indexOf('\n', j + 1)) {
    line++;
    lineStart = j + 1;
  }
  return `malformed JSON at position ${err.pos} (line ${line}, column ${err.pos - lineStart + 1}): ${err.reason}`;
}
