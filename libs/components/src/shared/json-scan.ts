// A character-level walk over JSON text that knows where strings start and end, so components can
// keep an array element's original bytes and can tell whether JS numbers would alter a literal.
// Callers validate the text with JSON.parse first; these helpers assume well-formed JSON.

import { OPEN_ARR, elements, skipString, skipWs } from './json-text';

const NUMBER_RE = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * [start, end) byte ranges of each top-level element of the JSON array in `text`, whitespace
 * excluded, in order. Returns null when the text is not one array.
 */
export function arrayItemSpans(text: string): Array<[number, number]> | null {
  const at = skipWs(text, 0);
  if (text.charCodeAt(at) !== OPEN_ARR) return null;
  try {
    return elements(text, at).map((e) => [e.start, e.end]);
  } catch {
    return null; // not one well-formed array
  }
}

/** Sign, significant digits and decimal exponent of a numeric literal, for exact comparison. */
function canonicalNumber(literal: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!m) return literal;
  // Sign and integer part always take part in a match; fraction and exponent are optional.
  const [, sign = '', int = '', frac = '', exp = '0'] = m;
  const digits = `${int}${frac}`;
  const lead = digits.search(/[1-9]/);
  if (lead < 0) return '0';
  const trimmed = digits.slice(lead).replace(/0+$/, '');
  const exponent = Number(exp) + int.length - lead;
  return `${sign}${trimmed}e${exponent}`;
}

/**
 * True when some number literal in the JSON text cannot be held exactly by a JS number (an id
 * above 2^53, a decimal with more than 17 significant digits): re-encoding the parsed value would
 * then silently change it.
 */
export function hasInexactNumbers(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charAt(i);
    if (c === '"') {
      i = skipString(text, i) - 1;
      continue;
    }
    if (c !== '-' && (c < '0' || c > '9')) continue;
    NUMBER_RE.lastIndex = i;
    const m = NUMBER_RE.exec(text);
    if (!m) continue;
    const literal = m[0];
    const value = Number(literal);
    if (!Number.isFinite(value) || canonicalNumber(literal) !== canonicalNumber(numberLiteral(value))) return true;
    i += literal.length - 1;
  }
  return false;
}

/** JS renders 1e21 as "1e+21"; strip the plus so the canonical form parses. */
function numberLiteral(value: number): string {
  return String(value).replace('e+', 'e');
}
