// format must be lossless at the byte level of every value: numbers, strings, escapes and key
// order survive exactly; only whitespace between tokens goes, and only for one valid document.
import { Pipeline, type Message } from '@context-guru/components';
import { compactJson, formatComponent } from '../../../libs/components/src/reformat/format.component';
import { testCtx } from '../../support/ctx';

async function runFormat(messages: Message[], raw?: unknown) {
  const c = formatComponent.create(formatComponent.options(raw, 'components.format'));
  const r = await new Pipeline([c]).run(messages, testCtx());
  return { messages: r.messages, report: r.reports[0]! };
}

const tool = (content: Message['content']): Message => ({ role: 'tool', tool_call_id: 'call_1', content });

describe('compactJson', () => {
  it('keeps big integers, trailing zeros and exponents exactly as written', () => {
    const text = '{\n  "id": 12345678901234567890,\n  "ratio": 1.0,\n  "price": 19.90,\n  "tiny": 1E-7,\n  "neg": -0.0\n}';
    expect(compactJson(text)).toBe('{"id":12345678901234567890,"ratio":1.0,"price":19.90,"tiny":1E-7,"neg":-0.0}');
  });

  it('keeps key order, duplicate keys, and whitespace and escapes inside strings', () => {
    const text = '{\n  "zeta": "a  b\\n  c",\n  "alpha": "say \\"hi\\"  ",\n  "zeta": "\\u003cb\\u003e \\/x"\n}';
    expect(compactJson(text)).toBe('{"zeta":"a  b\\n  c","alpha":"say \\"hi\\"  ","zeta":"\\u003cb\\u003e \\/x"}');
  });

  it('rejects anything but exactly one JSON document', () => {
    expect(compactJson('[1, 2]\nwarnings: 0 []')).toBeNull();
    expect(compactJson('{"a": 1}\n{"a": 2}')).toBeNull();
    expect(compactJson('{"a": 1,}')).toBeNull();
    expect(compactJson('  [ 1 ,\t2 ]\r\n')).toBe('[1,2]');
  });
});

describe('format component', () => {
  const pretty = JSON.stringify(
    {
      order_id: 'ord_8812',
      lines: [
        { sku: 'sku-0001', qty: 2 },
        { sku: 'sku-0042', qty: 1 },
      ],
      total: 59.8,
      currency: 'EUR',
    },
    null,
    2,
  );

  it('rewrites a pretty tool output with the big integer untouched', async () => {
    const text = pretty.replace('"order_id": "ord_8812"', '"order_id": 12345678901234567890');
    const { messages, report } = await runFormat([tool(text)], { min_tokens: 1 });
    expect(messages[0]!.content).toBe(text.replace(/\n\s*/g, '').replace(/": /g, '":'));
    expect(messages[0]!.content).toContain('12345678901234567890');
    expect(JSON.parse(messages[0]!.content as string)).toEqual(JSON.parse(text));
    expect(report.gates).toEqual({});
  });

  it('never touches non-tool messages and writes a text-block array back as one string', async () => {
    const user: Message = { role: 'user', content: pretty };
    const blocks = tool([
      { type: 'text', text: pretty.slice(0, 40) },
      { type: 'text', text: pretty.slice(40) },
    ]);
    const { messages } = await runFormat([user, blocks], { min_tokens: 1 });
    expect(messages[0]).toEqual(user);
    expect(messages[1]!.content).toBe(compactJson(pretty));
  });

  it('descends one level only, leaving sibling fields byte-exact', async () => {
    const inner = JSON.stringify(
      {
        items: [
          { id: 1, name: 'ada' },
          { id: 2, name: 'grace' },
        ],
        next: null,
      },
      null,
      2,
    );
    const nested = JSON.stringify({ deeper: inner });
    const envelope = `{"ok":true,"note":"caf\\u00e9","stdout":${JSON.stringify(inner)},"meta":${nested}}`;
    const { messages } = await runFormat([tool(envelope)], { min_tokens: 1 });
    const out = messages[0]!.content as string;
    expect(out).toContain('"note":"caf\\u00e9"');
    expect(out).toContain(`"meta":${nested}`);
    expect(JSON.parse(JSON.parse(out).stdout)).toEqual(JSON.parse(inner));
    expect(JSON.parse(out).stdout).toBe(compactJson(inner));
  });

  it('does not try string fields shorter than 64 characters as embedded JSON', async () => {
    const envelope = JSON.stringify({ ok: true, exit_code: 0, stdout: '{ "a": 1, "b": 2 }', stderr: 'warning: deprecated flag --legacy' });
    const { messages, report } = await runFormat([tool(envelope)], { min_tokens: 1 });
    expect(messages[0]!.content).toBe(envelope);
    expect(report.gates).toEqual({ envelope_no_embedded_json: 1 });
  });

  it('counts below_min_tokens against the default floor of 50', async () => {
    const { messages, report } = await runFormat([tool('{\n  "ok": true\n}')]);
    expect(messages[0]!.content).toBe('{\n  "ok": true\n}');
    expect(report.gates).toEqual({ below_min_tokens: 1 });
  });

  it('rejects unknown option keys naming the key', () => {
    expect(() => formatComponent.options({ min_token: 5 }, 'components.format')).toThrow('components.format.min_token');
  });
});
