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
    const ch = raw[j]!;
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

/** The first syntax error of `raw`, or null when it is valid JSON. Iterative: nesting depth is unbounded. */
export function locateSyntaxError(raw: string): JsonSyntaxError | null {
  const stack: string[] = [];
  let state: State = 'value';
  let i = 0;
  const n = raw.length;
  for (;;) {
    while (i < n && ' \t\n\r'.includes(raw[i]!)) i++;
    if (i >= n) {
      if (state === 'after_value' && stack.length === 0) return null;
      return { pos: n, reason: 'unexpected end of input' };
    }
    const ch = raw[i]!;
    let next: number | JsonSyntaxError;
    switch (state) {
      case 'value_or_close':
      case 'value':
        if (state === 'value_or_close' && ch === ']') {
          stack.pop();
          state = 'after_value';
          i++;
          continue;
        }
        if (ch === '{' || ch === '[') {
          stack.push(ch);
          state = ch === '{' ? 'key_or_close' : 'value_or_close';
          i++;
          continue;
        }
        if (ch === '"') next = scanString(raw, i);
        else if (ch === '-' || isDigit(ch)) next = scanNumber(raw, i);
        else {
          const lit = ['true', 'false', 'null'].find((w) => raw.startsWith(w, i));
          next = lit ? i + lit.length : { pos: i, reason: `unexpected character ${show(ch)}, expected a value` };
        }
        if (typeof next !== 'number') return next;
        i = next;
        state = 'after_value';
        continue;
      case 'key_or_close':
      case 'key':
        if (state === 'key_or_close' && ch === '}') {
          stack.pop();
          state = 'after_value';
          i++;
          continue;
        }
        if (ch !== '"') return { pos: i, reason: `unexpected character ${show(ch)}, expected a double-quoted property name` };
        next = scanString(raw, i);
        if (typeof next !== 'number') return next;
        i = next;
        state = 'colon';
        continue;
      case 'colon':
        if (ch !== ':') return { pos: i, reason: `unexpected character ${show(ch)}, expected ':' after a property name` };
        i++;
        state = 'value';
        continue;
      case 'after_value': {
        const top = stack[stack.length - 1];
        if (top === undefined) return { pos: i, reason: `unexpected character ${show(ch)} after the JSON value` };
        const close = top === '{' ? '}' : ']';
        if (ch === ',') state = top === '{' ? 'key' : 'value';
        else if (ch === close) stack.pop();
        else return { pos: i, reason: `unexpected character ${show(ch)}, expected ',' or '${close}'` };
        i++;
        continue;
      }
    }
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
