// Generates realistic multi-turn agent transcripts in both dialects from real files on this
// machine (sources shipped in node_modules, pinned by the lockfile) and realistic command logs.
// Deterministic for a seed, so tests and benchmarks replay the same sessions.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { xorshift32 } from './prng';

export interface AgentStep {
  id: string;
  tool: 'read_file' | 'bash' | 'http_get';
  args: Record<string, string>;
  output: string;
}

const ROOT = join(__dirname, '..', '..', 'node_modules');
const SOURCE_DIRS = [
  'undici/lib/dispatcher',
  'undici/lib/core',
  'fastify/lib',
  'ioredis/built',
  'yaml/dist/compose',
  'pg/lib',
  'prom-client/lib',
];

let sourceFiles: string[] | undefined;
function realSourceFiles(): string[] {
  if (sourceFiles) return sourceFiles;
  const out: string[] = [];
  for (const dir of SOURCE_DIRS) {
    try {
      for (const f of readdirSync(join(ROOT, dir)).sort()) {
        const p = join(ROOT, dir, f);
        if (/\.(js|ts)$/.test(f) && !f.endsWith('.d.ts') && statSync(p).size > 2000 && statSync(p).size < 40000) out.push(p);
      }
    } catch {
      // a package layout changed: fewer sources, still deterministic
    }
  }
  sourceFiles = out;
  return out;
}

function pytestRun(rnd: () => number, failing: number): string {
  const lines = [
    '============================= test session starts ==============================',
    'platform linux -- Python 3.11.7, pytest-8.3.2, pluggy-1.5.0',
    'rootdir: /work/app',
    'collected 48 items',
    '',
  ];
  for (let f = 0; f < 6; f++)
    lines.push(
      `tests/test_module_${f}.py ${'.'.repeat(6 + Math.floor(rnd() * 4))}${f < failing ? 'F' : '.'}  [${String(Math.floor(((f + 1) / 6) * 100)).padStart(3)}%]`,
    );
  if (failing) {
    lines.push('', '=================================== FAILURES ===================================');
    for (let f = 0; f < failing; f++) {
      lines.push(
        `______________________________ test_parse_${f} _______________________________`,
        '',
        `    def test_parse_${f}():`,
        `        result = parse("a,b,${f}")`,
        `>       assert result == ["a", "b", "${f + 1}"]`,
        `E       AssertionError: assert ['a', 'b', '${f}'] == ['a', 'b', '${f + 1}']`,
        '',
        `tests/test_module_${f}.py:${20 + f}: AssertionError`,
      );
    }
    lines.push('=========================== short test summary info ============================');
    for (let f = 0; f < failing; f++) lines.push(`FAILED tests/test_module_${f}.py::test_parse_${f} - AssertionError`);
  }
  lines.push(
    `========================= ${failing ? `${failing} failed, ` : ''}${48 - failing} passed in ${(1 + rnd() * 3).toFixed(2)}s =========================`,
  );
  return lines.join('\n');
}

function apiPayload(rnd: () => number, n: number): string {
  const items = Array.from({ length: n }, (_, i) => ({
    id: 1000 + i,
    title: `Issue ${i}: ${['timeout in auth handler', 'flaky test on CI', 'docs typo', 'memory leak in cache'][i % 4]}`,
    state: rnd() < 0.7 ? 'open' : 'closed',
    labels: [['bug'], ['ci'], ['docs'], ['perf']][i % 4],
    comments: Math.floor(rnd() * 20),
    created_at: `2026-10-${String(1 + (i % 28)).padStart(2, '0')}T12:00:00Z`,
  }));
  return JSON.stringify(items, null, 2);
}

/** n agent steps: reads of real source files, test runs, API payloads, and re-reads. */
export function agentSteps(n: number, seed = 7): AgentStep[] {
  const rnd = xorshift32(seed);
  const files = realSourceFiles();
  const steps: AgentStep[] = [];
  for (let i = 0; i < n; i++) {
    const id = `call_${seed}_${i}`;
    const r = rnd();
    if (r < 0.55 && files.length) {
      const f = files[Math.floor(rnd() * files.length)]!;
      steps.push({ id, tool: 'read_file', args: { path: f.slice(ROOT.length + 1) }, output: readFileSync(f, 'utf8') });
    } else if (r < 0.75) {
      steps.push({
        id,
        tool: 'bash',
        args: { command: 'python -m pytest -q' },
        output: pytestRun(rnd, i === n - 1 ? 0 : 1 + Math.floor(rnd() * 2)),
      });
    } else if (r < 0.9) {
      steps.push({
        id,
        tool: 'http_get',
        args: { url: 'https://api.example.test/issues' },
        output: apiPayload(rnd, 8 + Math.floor(rnd() * 20)),
      });
    } else if (steps.length) {
      const again = steps[Math.floor(rnd() * steps.length)]!;
      steps.push({ ...again, id });
    } else {
      steps.push({ id, tool: 'bash', args: { command: 'ls' }, output: 'README.md\nsrc\ntests' });
    }
  }
  return steps;
}

export const TASK = 'Fix the failing parser tests in tests/test_module_*.py without breaking the HTTP client.';
export const SYSTEM = 'You are a careful coding agent. Use the tools to inspect the repository before editing.';

const OPENAI_TOOLS = ['read_file', 'bash', 'http_get'].map((name) => ({
  type: 'function',
  function: { name, description: `The ${name} tool.`, parameters: { type: 'object', properties: { arg: { type: 'string' } } } },
}));
const ANTHROPIC_TOOLS = ['read_file', 'bash', 'http_get'].map((name) => ({
  name,
  description: `The ${name} tool.`,
  input_schema: { type: 'object', properties: { arg: { type: 'string' } } },
}));

/** The OpenAI request of turn `upto` (0-based): the task plus `upto` tool exchanges. */
export function openaiTurn(steps: AgentStep[], upto: number, extra: Record<string, unknown> = {}) {
  const messages: Array<Record<string, unknown>> = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: TASK },
  ];
  for (const s of steps.slice(0, upto)) {
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: s.id, type: 'function', function: { name: s.tool, arguments: JSON.stringify(s.args) } }],
    });
    messages.push({ role: 'tool', tool_call_id: s.id, content: s.output });
  }
  return { model: 'gpt-fake', messages, tools: OPENAI_TOOLS, ...extra };
}

/** The Anthropic request of turn `upto`: tool results travel as tool_result blocks in user turns. */
export function anthropicTurn(steps: AgentStep[], upto: number, extra: Record<string, unknown> = {}) {
  const messages: Array<Record<string, unknown>> = [{ role: 'user', content: TASK }];
  for (const s of steps.slice(0, upto)) {
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: s.id.replace('call', 'toolu'), name: s.tool, input: s.args }] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: s.id.replace('call', 'toolu'), content: s.output }] });
  }
  return { model: 'claude-fake', max_tokens: 1024, system: SYSTEM, messages, tools: ANTHROPIC_TOOLS, ...extra };
}
