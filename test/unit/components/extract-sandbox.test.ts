// The QuickJS sandbox that runs model-written filters: every escape attempt ends in a named failure,
// nothing one program does survives into the next, and a worker that hangs or dies is replaced.
import { Worker } from 'node:worker_threads';
import { SandboxPool } from '../../../libs/components/src/offload/extract/sandbox/sandbox-pool';
import { DEFAULT_LIMITS } from '../../../libs/components/src/offload/extract/sandbox/sandbox.types';

const LOG = [
  '2025-03-14 09:12:03,137 INFO  [crm_sync] starting incremental sync',
  '2025-03-14 09:12:18,070 ERROR [crm_sync.auth] token refresh failed: ReadTimeoutError',
  '2025-03-14 09:12:23,276 INFO  [crm_sync] sync complete',
].join('\n');

let pool: SandboxPool;
beforeAll(() => {
  pool = new SandboxPool(2);
});
afterAll(() => pool.close());

describe('sandbox', () => {
  it('runs a filter over INPUT with the RE2 helpers', async () => {
    const r = await pool.run(
      `const errors = re_findall('^.*ERROR.*$', INPUT);
       const ts = re_match('(\\\\d{2}:\\\\d{2}:\\\\d{2})', errors[0]);
       OUTPUT = errors.concat(re_split('\\\\n', INPUT).slice(-1)).join('\\n') + ' @' + ts[1] + re_sub('a(b)', '[$1]', 'xab');`,
      LOG,
    );
    expect(r).toMatchObject({ ok: true, output: `${LOG.split('\n')[1]}\n${LOG.split('\n')[2]} @09:12:18x[b]` });
  });

  it.each([
    ['require', "return require('fs').readFileSync('/etc/passwd', 'utf8');", 'runtime_error', /require/],
    ['process', 'return process.env.HOME;', 'runtime_error', /process/],
    ['fetch', "return fetch('http://169.254.169.254/latest/meta-data/');", 'runtime_error', /fetch/],
    ['import', "import fs from 'fs'; return fs.readFileSync('/etc/passwd');", 'syntax_error', /./],
    ['dynamic import', "return import('fs');", 'no_string_output', /./],
    [
      'function constructor to the host',
      "return this.constructor.constructor('return process')().pid;",
      'runtime_error',
      /process|undefined/,
    ],
    ['infinite loop', 'while (true) {}', 'interrupted_step_budget', /interrupted/],
    ['memory bomb', 'const keep = []; for (;;) keep.push({ a: 1, b: [1, 2, 3] });', 'out_of_memory', /memory/],
    // Native calls that allocate between interrupt checks: the host deadline or the runtime's
    // memory limit stops them, whichever trips first on this machine (a fast one fills the limit
    // before the deadline, a loaded one the other way round) — either way the run fails safely.
    [
      'memory bomb inside one native call',
      'const keep = []; for (;;) keep.push(new Array(100000).fill(7));',
      'worker_timeout|out_of_memory',
      /no answer|memory/,
    ],
    ['stack bomb', 'function f(n) { return f(n + 1) + 1; } return String(f(0));', 'stack_overflow', /stack/],
    // QuickJS's regex engine calls the interrupt handler while it backtracks: the budgets bound it.
    ['catastrophic native regex', "return String(/(a+)+$/.test('a'.repeat(40) + 'b'));", 'interrupted_step_budget', /interrupted/],
    ['catastrophic pattern through a helper', "return re_sub('(a+)+$', '', 'a'.repeat(5000) + 'b');", 'ok', /./],
    ['helper with a non-string', 're_sub({ toString() { return "x"; } }, "", INPUT); return "";', 'runtime_error', /string arguments/],
    ['the raw helper short of an argument', "return __cg_re('sub', 'a', INPUT);", 'runtime_error', /string arguments/],
    ['a non-string result', 'return { toString() { return INPUT; } };', 'no_string_output', /OUTPUT/],
  ])('%s fails safely', async (_name, code, expected, detail) => {
    // The step and memory budgets must trip before the wall clock does, however loaded the machine:
    // give those cases a wall clock far above what they need (the deadline has a test of its own).
    const ownBudget = expected === 'interrupted_step_budget' || expected === 'out_of_memory';
    const r = await pool.run(code, LOG, ownBudget ? { ...DEFAULT_LIMITS, wallMs: 30_000 } : undefined);
    if (expected === 'ok') {
      expect(r.ok).toBe(true);
      return;
    }
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(expected.split('|')).toContain(r.failure);
      expect(r.detail).toMatch(detail);
    }
  });

  it('stops a tight loop on the wall clock when the step budget is larger', async () => {
    const r = await pool.run('for (;;) {}', LOG, { ...DEFAULT_LIMITS, wallMs: 100, maxSteps: 1e9 });
    expect(r).toMatchObject({ ok: false, failure: 'interrupted_wall_clock' });
  });

  it('leaves no trace of prototype tampering for the next program', async () => {
    const tamper = `String.prototype.split = function () { return ['forged']; };
      Array.prototype.join = function () { return 'forged'; };
      JSON.parse = function () { return ['forged']; };
      Object.prototype.polluted = true;
      globalThis.OUTPUT = 'forged';
      return INPUT.split('\\n').join('\\n');`;
    expect(await pool.run(tamper, LOG)).toMatchObject({ ok: true, output: 'forged' });
    const clean = await pool.run(
      "return [INPUT.split('\\n').length, typeof ({}).polluted, re_findall('INFO|ERROR', INPUT).length].join(',');",
      LOG,
    );
    expect(clean).toMatchObject({ ok: true, output: '3,undefined,3' });
  });

  it('terminates and replaces a worker that never answers, and one that dies mid-run', async () => {
    const silent = () =>
      new Worker("require('node:worker_threads').parentPort.postMessage('ready'); setInterval(() => {}, 1000);", { eval: true });
    const hung = new SandboxPool(1, silent);
    const limits = { ...DEFAULT_LIMITS, wallMs: 50 };
    expect(await hung.run('return INPUT;', LOG, limits)).toMatchObject({ ok: false, failure: 'worker_timeout' });
    expect(await hung.run('return INPUT;', LOG, limits)).toMatchObject({ ok: false, failure: 'worker_timeout' });
    expect(hung.replaced).toBe(2);
    await hung.close();

    const dying = () =>
      new Worker("const p = require('node:worker_threads').parentPort; p.postMessage('ready'); p.on('message', () => process.exit(3));", {
        eval: true,
      });
    const crashy = new SandboxPool(1, dying);
    expect(await crashy.run('return INPUT;', LOG)).toMatchObject({ ok: false, failure: 'worker_crashed' });
    await crashy.close();
  });

  it('gives up cleanly when a worker cannot start', async () => {
    const broken = new SandboxPool(1, () => new Worker("throw new Error('no wasm here')", { eval: true }));
    expect(await broken.run('return INPUT;', LOG)).toMatchObject({ ok: false, failure: 'sandbox_unavailable' });
    expect(await broken.run('return INPUT;', LOG)).toMatchObject({ ok: false, failure: 'sandbox_unavailable' });
    await broken.close();
  });

  it('serves concurrent jobs from a pool of two', async () => {
    const runs = await Promise.all(Array.from({ length: 6 }, (_, i) => pool.run(`return INPUT.slice(0, ${i + 1});`, LOG)));
    expect(runs.map((r) => (r.ok ? r.output : r.failure))).toEqual(Array.from({ length: 6 }, (_, i) => LOG.slice(0, i + 1)));
  });
});
