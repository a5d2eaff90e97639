// A malformed body gets a 400 that says where and why it broke, identically on every Node version.
import { locateSyntaxError } from '../../../libs/engine/src/wire/json-error';
import { decodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { WireError } from '../../../libs/engine/src/wire/wire.types';

function decodeError(raw: string): WireError {
  try {
    decodeRequest('openai', raw);
  } catch (err) {
    if (err instanceof WireError) return err;
    throw err;
  }
  throw new Error('decoded a malformed body');
}

describe('malformed JSON', () => {
  it('reports position, line and column of a missing value', () => {
    const err = decodeError('{\n  "model": "gpt-4o",\n  "messages": [,]\n}');
    expect(err.status).toBe(400);
    expect(err.code).toBe('malformed_json');
    expect(err.message).toBe(`malformed JSON at position 38 (line 3, column 16): unexpected character ",", expected a value`);
  });

  it('reports a trailing comma before a closing brace', () => {
    expect(decodeError('{"messages":[],}').message).toBe(
      `malformed JSON at position 15 (line 1, column 16): unexpected character "}", expected a double-quoted property name`,
    );
  });

  it('reports truncated input at its end', () => {
    expect(decodeError('{"messages":[{"role":"user"').message).toBe(
      'malformed JSON at position 27 (line 1, column 28): unexpected end of input',
    );
    expect(decodeError('').message).toBe('malformed JSON at position 0 (line 1, column 1): unexpected end of input');
  });

  it('reports an unterminated string with where it started', () => {
    expect(decodeError('{"messages":"abc').message).toBe(
      'malformed JSON at position 16 (line 1, column 17): unterminated string starting at position 12',
    );
  });

  it('reports bad escapes, raw control characters and bad numbers', () => {
    expect(decodeError('{"a":"\\x"}').message).toMatch(/position 6 .*bad escape \\x/);
    expect(decodeError('{"a":"line\nbreak"}').message).toMatch(/position 10 .*unescaped control character/);
    expect(decodeError('{"a":01}').message).toMatch(/position 6 .*expected ',' or '}'/);
    expect(decodeError('{"a":1.}').message).toMatch(/position 7 .*digit expected after the decimal point/);
    expect(decodeError('{"a":tru}').message).toMatch(/position 5 .*unexpected character "t"/);
  });

  it('reports data after the value', () => {
    expect(decodeError('{"messages":[]} {}').message).toMatch(/position 16 .*after the JSON value/);
  });

  it('rejects a non-object body and a non-array messages as invalid_request', () => {
    for (const raw of ['[]', '"x"', '{"messages":{}}', '{"model":"m"}']) {
      const err = decodeError(raw);
      expect(err.code).toBe('invalid_request');
      expect(err.status).toBe(400);
    }
  });

  it('agrees with JSON.parse on validity across tricky inputs', () => {
    const inputs = [
      '{"a":[1,2,{"b":null}],"c":"\\ud83d\\ude00","d":-0.5E+3}',
      '  [ ]  ',
      '"\\/"',
      '{"a":1,}',
      '[1 2]',
      '{"a" 1}',
      '-',
      '1e',
      '[[[[[[[[[[]]]]]]]]]]',
      '{"a":"\u2028"}',
      'nul',
    ];
    for (const raw of inputs) {
      let ok = true;
      try {
        JSON.parse(raw);
      } catch {
        ok = false;
      }
      expect([raw, locateSyntaxError(raw) === null]).toEqual([raw, ok]);
    }
  });

  it('survives deep nesting without recursion', () => {
    const raw = '['.repeat(100_000) + ']'.repeat(99_999);
    expect(locateSyntaxError(raw)).toEqual({ pos: raw.length, reason: 'unexpected end of input' });
  });
});
