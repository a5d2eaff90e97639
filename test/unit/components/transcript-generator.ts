// Deterministic synthetic agent transcripts for property tests: the same seed always yields the
// same messages, covering the shapes components meet in the wild (JSON, logs, traces, test runs,
// fenced code, repeats, tiny and unicode outputs, existing markers, block arrays, images).
import type { CacheView, ContentBlock, Message, Dialect } from '@context-guru/components';

import { mulberry32, type Rng } from '../../support/prng';

export type { Rng };
/** The property tests' PRNG (no Math.random anywhere in a property test). */
export const seededRng = mulberry32;

const int = (r: Rng, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
const pick = <T>(r: Rng, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const times = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

const WORDS = ['cart', 'checkout', 'inventory', 'billing', 'session', 'token', 'retry', 'queue', 'invoice', 'user', 'order', 'cache'];
const UNICODE = ['café', 'naïve', '東京', 'Привет', 'مرحبا', '🚀', '✅', '❌', 'e\u0301', '𝔘𝔫𝔦', '한국어', 'Ω≈ç√'];
const LEVELS = ['INFO', 'INFO', 'INFO', 'DEBUG', 'WARN', 'ERROR'];

/** Pretty JSON whose numbers include literals JS would re-print differently (1.0, 2^64). */
export function prettyJson(r: Rng, depth = 0): string {
  const raw = (v: string) => `__RAW:${v}__`;
  const scalar = () =>
    pick(r, [
      () => int(r, 0, 99999),
      () => raw(pick(r, ['1.0', '12345678901234567890', '-0.0', '2.50', '1e-7'])),
      () => `${pick(r, WORDS)}-${int(r, 1, 999)}`,
      () => pick(r, [true, false, null]),
      () => `${pick(r, UNICODE)} ${pick(r, WORDS)}`,
    ])();
  const value = (d: number): unknown => {
    if (d > 2 || r() < 0.5) return scalar();
    if (r() < 0.5) return times(int(r, 0, 8), () => value(d + 1));
    return Object.fromEntries(times(int(r, 1, 6), (i) => [`${pick(r, WORDS)}_${i}`, value(d + 1)]));
  };
  const top = r() < 0.4 ? times(int(r, 3, 30), () => value(depth + 1)) : value(depth);
  return JSON.stringify(top, null, pick(r, [2, 4, '\t'])).replace(/"__RAW:([^"]*)__"/g, '$1');
}

export function uniformArray(r: Rng): string {
  const withError = r() < 0.4;
  const rows = times(int(r, 3, 40), (i) => ({
    id: i + 1,
    name: `${pick(r, WORDS)}-${i}`,
    status: withError && i % 7 === 3 ? 'error: timeout' : 'ok',
    latency_ms: int(r, 1, 900),
  }));
  return JSON.stringify(rows, null, r() < 0.5 ? 2 : undefined);
}

export function logLines(r: Rng): string {
  return times(int(r, 1, 400), (i) => {
    const lvl = pick(r, LEVELS);
    return `2024-05-02T09:${String(int(r, 0, 59)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}.${int(r, 100, 999)}Z ${lvl.padEnd(5)} [${pick(r, WORDS)}-svc] request ${int(r, 1000, 9999)} ${lvl === 'ERROR' ? 'failed: connection reset by peer' : `handled in ${int(r, 1, 500)}ms`}`;
  }).join('\n');
}

export function stackTrace(r: Rng): string {
  const frames = times(
    int(r, 2, 25),
    (i) =>
      `  File "/app/${pick(r, WORDS)}/${pick(r, WORDS)}.py", line ${int(r, 1, 900)}, in handler_${i}\n    result = process(${pick(r, WORDS)}, retries=${i})`,
  );
  const py = `Traceback (most recent call last):\n${frames.join('\n')}\nKeyError: '${pick(r, WORDS)}'`;
  const js = `TypeError: Cannot read properties of undefined (reading '${pick(r, WORDS)}')\n${times(int(r, 2, 20), (i) => `    at ${pick(r, WORDS)}Handler (/srv/app/dist/${pick(r, WORDS)}.js:${int(r, 1, 400)}:${i + 3})`).join('\n')}`;
  return r() < 0.5 ? py : js;
}

export function testRun(r: Rng): string {
  const n = int(r, 1, 120);
  const failed = r() < 0.5 ? int(r, 1, 5) : 0;
  const lines = times(n, (i) => `tests/test_${pick(r, WORDS)}.py::test_case_${i} ${i < failed ? 'FAILED' : 'PASSED'}`);
  const flavours = [
    () =>
      `============================= test session starts ==============================\ncollected ${n} items\n\n${lines.join('\n')}\n========= ${failed} failed, ${n - failed} passed in ${int(r, 1, 90)}.${int(r, 10, 99)}s =========`,
    () =>
      `PASS src/${pick(r, WORDS)}.test.ts\n${failed ? `FAIL src/${pick(r, WORDS)}.test.ts\n  ● ${pick(r, WORDS)} › handles retry\n\n    expect(received).toBe(expected)` : ''}\nTests:       ${failed} failed, ${n - failed} passed, ${n} total`,
    () =>
      `npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree\n${times(int(r, 1, 30), (i) => `npm ERR! peer ${pick(r, WORDS)}@"^${i}.0.0" from ${pick(r, WORDS)}@${i}.2.1`).join('\n')}`,
    () =>
      `--- FAIL: Test${pick(r, WORDS)} (0.${int(r, 10, 99)}s)\n    ${pick(r, WORDS)}_test.go:${int(r, 1, 300)}: got ${int(r, 0, 9)}, want ${int(r, 0, 9)}\nFAIL\nexit status 1\nFAIL\tgithub.com/acme/${pick(r, WORDS)}\t0.${int(r, 100, 999)}s`,
  ];
  return pick(r, flavours)();
}

export function fencedCode(r: Rng): string {
  const lang = pick(r, ['python', 'ts', 'go', 'rust', 'java']);
  const fns = times(int(r, 1, 12), (i) => {
    const body = times(int(r, 1, 15), (j) => `    let v${j} = compute_${pick(r, WORDS)}(${j}, "${pick(r, UNICODE)}");`).join('\n');
    if (lang === 'python') return `def handler_${i}(req):\n${body.replace(/let |;/g, '')}\n    return v0`;
    if (lang === 'go') return `func Handler${i}(req *Request) error {\n${body.replace(/let /g, '').replace(/;/g, '')}\n    return nil\n}`;
    return `function handler${i}(req: Request): number {\n${body}\n    return v0;\n}`;
  });
  return `Here is src/${pick(r, WORDS)}.${lang}:\n\n\`\`\`${lang}\n${fns.join('\n\n')}\n\`\`\`\n`;
}

function envelope(r: Rng): string {
  return JSON.stringify({ ok: true, exit_code: int(r, 0, 2), stdout: prettyJson(r), stderr: r() < 0.3 ? 'warning: deprecated' : '' });
}

function withMarkers(r: Rng, base: string): string {
  const id = times(16, () => pick(r, [...'0123456789abcdef'])).join('');
  return pick(r, [
    `[older tool output masked; starts: ${base.slice(0, 40)}…] <<cg:${id}>> [full output: call context_guru_expand]`,
    `${base}\n... (120 lines omitted) <<cg:${id}>> [full output: call context_guru_expand]\n${base.slice(0, 200)}`,
    `${base}\n[summary] ⟪cg⟫`,
  ]);
}

function textOutput(r: Rng): string {
  return pick(r, [
    () => prettyJson(r),
    () => prettyJson(r),
    uniformArray,
    logLines,
    stackTrace,
    testRun,
    fencedCode,
    envelope,
    () => pick(r, ['ok', '', '0', 'done', '[]', '{}', '\n']),
    () => times(int(r, 1, 60), () => `${pick(r, UNICODE)} ${pick(r, WORDS)}`).join(pick(r, [' ', '\n'])),
    () => withMarkers(r, logLines(r).slice(0, 1500)),
    () => JSON.stringify(JSON.parse(uniformArray(r))),
  ])(r);
}

function toolContent(r: Rng, text: string): Message['content'] {
  const roll = r();
  if (roll < 0.12) {
    const cut = int(r, 0, text.length);
    const blocks: ContentBlock[] = [
      { type: 'text', text: text.slice(0, cut) },
      { type: 'text', text: text.slice(cut) },
    ];
    if (r() < 0.5) blocks[1] = { type: 'text', text: text.slice(cut), cache_control: { type: 'ephemeral' } };
    return blocks;
  }
  if (roll < 0.2) {
    return [
      { type: 'text', text },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
    ];
  }
  return text;
}

export interface GeneratedCase {
  messages: Message[];
  provider: Dialect;
  cache: CacheView;
  persistent: boolean;
}

export function generateTranscript(seed: number): GeneratedCase {
  const r = seededRng(seed);
  const messages: Message[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: `Fix the ${pick(r, WORDS)} ${pick(r, WORDS)} bug; the ${pick(r, WORDS)} tests fail.` },
  ];
  const outputs: string[] = [];
  const n = int(r, 1, 12);
  for (let i = 0; i < n; i++) {
    const id = `call_${seed}_${i}`;
    const name = pick(r, ['bash', 'read_file', 'grep', 'http_get']);
    messages.push({
      role: 'assistant',
      content: r() < 0.3 ? 'Let me look.' : null,
      tool_calls: [{ id, name, arguments: JSON.stringify({ arg: pick(r, WORDS) }) }],
    });
    const text = outputs.length > 0 && r() < 0.2 ? pick(r, outputs) : textOutput(r);
    outputs.push(text);
    messages.push({ role: 'tool', tool_call_id: id, content: toolContent(r, text) });
  }
  if (r() < 0.5) messages.push({ role: 'user', content: `Now check the ${pick(r, WORDS)} ${pick(r, WORDS)} path too.` });
  const aware = r() < 0.4;
  const cache: CacheView = { aware, maxCachedIdx: aware ? int(r, -1, messages.length) : -1, cold: aware && r() < 0.3 };
  return { messages, provider: r() < 0.5 ? 'openai' : 'anthropic', cache, persistent: r() < 0.9 };
}
