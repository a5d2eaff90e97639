// The scanner must agree with JSON.parse on where every value is, including the cases a naive
// scanner gets wrong: escaped quotes, backslash runs, escaped keys and duplicate keys.
import { elementAt, elements, member, members, skipValue, spanAt } from '../../../libs/engine/src/wire/json-scan';
import { RawIndex } from '../../../libs/engine/src/wire/raw-index';

const slice = (raw: string, s: { start: number; end: number } | undefined) => (s ? raw.slice(s.start, s.end) : undefined);

describe('json-scan', () => {
  it('skips strings whose content ends in escaped quotes and backslash runs', () => {
    for (const v of ['"a\\"b"', '"a\\\\"', '"\\\\\\""', '"\\\\\\\\"', '""', '"\\u0022"']) {
      const raw = `${v} ,`;
      expect(skipValue(raw, 0)).toBe(v.length);
      expect(JSON.parse(raw.slice(0, v.length))).toBe(JSON.parse(v));
    }
  });

  it('skips nested containers with brackets inside strings', () => {
    const raw = '{"a":["]","}",{"b":"[{\\"}"}],"c":[[[]]]} tail';
    expect(skipValue(raw, 0)).toBe(raw.indexOf(' tail'));
  });

  it('skips numbers and literals up to the delimiter', () => {
    const raw = '[12345678901234567890 ,-1.5e-7,true,null,false]';
    expect(elements(raw, 0).map((s) => raw.slice(s.start, s.end))).toEqual(['12345678901234567890', '-1.5e-7', 'true', 'null', 'false']);
  });

  it('lists members with decoded keys and value spans, keeping duplicates in order', () => {
    const raw = '{ "a" : 1 ,"\\u0062":"x","a":[2] }';
    expect(members(raw, 0).map((m) => [m.key, slice(raw, m.value)])).toEqual([
      ['a', '1'],
      ['b', '"x"'],
      ['a', '[2]'],
    ]);
  });

  it('resolves a duplicate key to the last occurrence, as JSON.parse does', () => {
    const raw = '{"content":"first","content":"second"}';
    expect(slice(raw, member(raw, 0, 'content'))).toBe('"second"');
    expect((JSON.parse(raw) as { content: string }).content).toBe('second');
  });

  it('finds an escaped key name', () => {
    const raw = '{"con\\u0074ent":"v"}';
    expect(slice(raw, member(raw, 0, 'content'))).toBe('"v"');
  });

  it('walks an array only as far as the element asked for', () => {
    const raw = '[ {"x":1} , "two",[3] ]';
    expect(slice(raw, elementAt(raw, 0, 1))).toBe('"two"');
    expect(slice(raw, elementAt(raw, 0, 2))).toBe('[3]');
    expect(elementAt(raw, 0, 3)).toBeUndefined();
    expect(elementAt('[ ]', 0, 0)).toBeUndefined();
  });

  it('follows a path of keys and indices', () => {
    const raw = '{"content":[{"type":"tool_result","content":[{"type":"image"},{"type":"text","text":"hi"}]}]}';
    expect(slice(raw, spanAt(raw, { start: 0, end: raw.length }, ['content', 0, 'content', 1, 'text']))).toBe('"hi"');
    expect(spanAt(raw, { start: 0, end: raw.length }, ['content', 0, 'missing'])).toBeUndefined();
    expect(spanAt(raw, { start: 0, end: raw.length }, ['content', 'notAnIndex'])).toBeUndefined();
  });

  it('indexes the top level and message elements in one walk, last duplicate winning', () => {
    const raw = ' {"messages":[1],"model":"m", "messages" : [ {"a":1} ,{"b":[2]} ] , "tools":[]}\n';
    const index = new RawIndex(raw);
    expect(slice(raw, index.topLevel('model'))).toBe('"m"');
    expect(slice(raw, index.topLevel('messages'))).toBe('[ {"a":1} ,{"b":[2]} ]');
    expect(slice(raw, index.message(0))).toBe('{"a":1}');
    expect(slice(raw, index.message(1))).toBe('{"b":[2]}');
    expect(index.message(2)).toBeUndefined();
    expect(index.insertionPoint()).toEqual({ at: raw.lastIndexOf('[]') + 2, comma: true });
  });

  it('has an insertion point without comma in an empty object', () => {
    expect(new RawIndex(' { } ').insertionPoint()).toEqual({ at: 2, comma: false });
  });
});
