// Transcripts built for one component each: the tool outputs it is meant for, in the amount and
// shape it acts on (repeats for dedup, many outputs for mask and phi_evict, two runs of one test
// for failed_run, shell calls for cmdfilter, Anthropic tool calls for cacheinject). The property
// test asserts each component acts on most of them, so a component that silently stops acting fails.
import type { Message } from '@context-guru/components';
import {
  fencedCode,
  logLines,
  prettyJson,
  seededRng,
  stackTrace,
  testRun,
  uniformArray,
  type GeneratedCase,
  type Rng,
} from './transcript-generator';

interface Focus {
  /** One tool output (`i` is its position among the outputs). */
  output: (r: Rng, i: number) => string;
  /** The command a shell call ran, when the outputs come from `bash`. */
  command?: (r: Rng, i: number) => string;
  outputs?: [number, number];
  provider?: GeneratedCase['provider'];
}

const int = (r: Rng, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
/** One output of at least `minChars` (the first of up to 100 draws that is; JSON stays one document). */
const big = (make: (r: Rng) => string, minChars: number) => (r: Rng) => {
  let text = make(r);
  for (let i = 0; i < 100 && text.length < minChars; i++) text = make(r);
  return text;
};
/** Outputs of one kind joined until `minChars` (logs and listings, where more lines is more of the same). */
const long = (make: (r: Rng) => string, minChars: number) => (r: Rng) => {
  let text = make(r);
  while (text.length < minChars) text += `\n${make(r)}`;
  return text;
};

function pytestRun(r: Rng, failed: boolean): string {
  const n = int(r, 30, 80);
  const rows = Array.from({ length: n }, (_, i) => `tests/test_orders.py::test_case_${i} ${failed && i % 9 === 4 ? 'FAILED' : 'PASSED'}`);
  const bad = rows.filter((l) => l.endsWith('FAILED')).length;
  return `============================= test session starts ==============================\nplatform linux -- Python 3.12.3, pytest-8.2.0\ncollected ${n} items\n\n${rows.join('\n')}\n${bad ? `FAILED tests/test_orders.py::test_case_4 - AssertionError: assert 3 == 4\n` : ''}========= ${bad} failed, ${n - bad} passed in ${int(r, 1, 9)}.${int(r, 10, 99)}s =========`;
}

export const FOCUS: Record<string, Focus> = {
  format: { output: big(prettyJson, 600) },
  toon: { output: (r) => uniformArray(r) },
  cacheinject: { output: (r) => logLines(r), provider: 'anthropic' },
  skeleton: { output: long(fencedCode, 1500) },
  dedup: { output: long(logLines, 2000), outputs: [3, 6] },
  collapse: { output: long(logLines, 12_000) },
  failed_run: {
    output: (r, i) => pytestRun(r, i === 0),
    command: () => 'pytest -q tests/test_orders.py',
    outputs: [2, 3],
  },
  cmdfilter: { output: (r) => pytestRun(r, r() < 0.5), command: () => 'pytest -v' },
  extract: { output: long(logLines, 4000) },
  smartcrush: { output: big(uniformArray, 800) },
  mask: { output: long(stackTrace, 1200), outputs: [5, 9] },
  phi_evict: { output: long(logLines, 3000), outputs: [3, 7] },
  summarize: { output: long(testRun, 2500), outputs: [6, 10] },
};

/** A deterministic transcript of `focus`'s outputs; dedup's repeat its first output verbatim. */
export function focusedTranscript(component: string, seed: number): GeneratedCase {
  const f = FOCUS[component];
  if (!f) throw new Error(`no focused transcript for ${component}`);
  const r = seededRng(seed);
  const messages: Message[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'The order service fails its tests; find out why and fix it.' },
  ];
  const [lo, hi] = f.outputs ?? [1, 4];
  const n = int(r, lo, hi);
  let first = '';
  for (let i = 0; i < n; i++) {
    const id = `call_${seed}_${i}`;
    const command = f.command?.(r, i);
    const args = command ? { command } : { path: `src/orders_${i}.py` };
    messages.push({
      role: 'assistant',
      content: 'Let me look.',
      tool_calls: [{ id, name: command ? 'bash' : 'read_file', arguments: JSON.stringify(args) }],
    });
    const text = component === 'dedup' && i > 0 && i % 2 === 0 ? first : f.output(r, i);
    if (i === 0) first = text;
    messages.push({ role: 'tool', tool_call_id: id, content: text });
  }
  messages.push({ role: 'user', content: 'Keep going: what fails in the order service tests?' });
  return {
    messages,
    provider: f.provider ?? (r() < 0.5 ? 'openai' : 'anthropic'),
    cache: { aware: false, maxCachedIdx: -1, cold: false },
    persistent: true,
  };
}
