// Runs one untrusted program in a fresh QuickJS runtime: no I/O, no imports, a heap cap, a stack
// cap, and an interrupt handler that enforces both a step budget and a deadline — QuickJS's regex
// engine calls it while backtracking too, so a catastrophic native RegExp is interrupted like a loop.
// A fresh runtime per run means nothing a program does (prototype tampering included) outlives it.
import { DefaultIntrinsics, type QuickJSContext, type QuickJSHandle, type QuickJSWASMModule } from 'quickjs-emscripten';
import { isRegexOp, RegexHelpers } from './regex-helpers';
import { MAX_STACK_BYTES, type SandboxFailure, type SandboxJob, type SandboxResult } from './sandbox.types';

/** Helpers the program sees; arrays cross the boundary as JSON text, parsed inside the sandbox. */
const PRELUDE = `
var re_sub = function (pattern, replacement, text) { return __cg_re('sub', pattern, text, replacement); };
var re_findall = function (pattern, text) { return JSON.parse(__cg_re('findall', pattern, text, '')); };
var re_split = function (pattern, text) { return JSON.parse(__cg_re('split', pattern, text, '')); };
var re_match = function (pattern, text) { return JSON.parse(__cg_re('match', pattern, text, '')); };
var OUTPUT = undefined;
`;

/** The program body runs as a function body: `return` the result, or assign the global OUTPUT. */
function wrapProgram(code: string): string {
  return `(function () {\n${code}\n}).call(undefined)`;
}

export interface RunnerOutcome {
  result: SandboxResult;
  /** The QuickJS module may be unusable (a host-side fault): the worker should be replaced. */
  poisoned: boolean;
}

function errorOf(ctx: QuickJSContext, h: QuickJSHandle): { name: string; message: string } {
  try {
    const d: unknown = ctx.dump(h);
    if (typeof d === 'object' && d !== null) {
      const o = d as { name?: unknown; message?: unknown };
      return { name: String(o.name ?? 'Error'), message: String(o.message ?? '') };
    }
    return { name: 'Error', message: String(d) };
  } catch {
    return { name: 'InternalError', message: 'out of memory' };
  }
}

function classify(err: { name: string; message: string }, tripped: 'wall' | 'steps' | null): SandboxFailure {
  if (/interrupted/i.test(err.message)) return tripped === 'steps' ? 'interrupted_step_budget' : 'interrupted_wall_clock';
  if (/out of memory/i.test(err.message)) return 'out_of_memory';
  if (/stack overflow/i.test(err.message)) return 'stack_overflow';
  if (err.name === 'SyntaxError') return 'syntax_error';
  return 'runtime_error';
}

function readString(ctx: QuickJSContext, h: QuickJSHandle): string | null {
  return ctx.typeof(h) === 'string' ? ctx.getString(h) : null;
}

export function runProgram(Q: QuickJSWASMModule, job: SandboxJob): RunnerOutcome {
  const { limits } = job;
  const deadline = Date.now() + limits.wallMs;
  let steps = 0;
  let tripped: 'wall' | 'steps' | null = null;
  const rt = Q.newRuntime();
  rt.setMemoryLimit(limits.memoryBytes);
  rt.setMaxStackSize(MAX_STACK_BYTES);
  rt.setInterruptHandler(() => {
    steps++;
    if (steps > limits.maxSteps) tripped = 'steps';
    else if (Date.now() > deadline) tripped = 'wall';
    return tripped !== null;
  });
  // Native RegExp stays: models write `/error|fail/i` whatever the prompt says, and refusing those
  // programs threw away exactly the filters the task asked for. The budgets bound its backtracking.
  const ctx = rt.newContext({ intrinsics: DefaultIntrinsics });
  const helpers = new RegexHelpers(deadline);
  let poisoned = false;
  let result: SandboxResult;
  try {
    const re = ctx.newFunction('__cg_re', (...args: QuickJSHandle[]) => {
      // A program may call __cg_re itself with fewer than four arguments: a missing one is refused
      // like a non-string one (it used to reach the helper as undefined, and 'sub' wrote "undefined").
      const [op, pattern, text, replacement] = args.map((a) => (a ? readString(ctx, a) : null));
      if (op == null || !isRegexOp(op) || pattern == null || text == null || replacement == null) {
        throw new TypeError('regex helpers take string arguments');
      }
      return ctx.newString(helpers.run(op, pattern, text, replacement));
    });
    ctx.setProp(ctx.global, '__cg_re', re);
    re.dispose();
    const input = ctx.newString(job.input);
    ctx.setProp(ctx.global, 'INPUT', input);
    input.dispose();
    const prelude = ctx.evalCode(PRELUDE, 'prelude.js', { type: 'global' });
    if (prelude.error) {
      prelude.error.dispose();
      throw new Error('sandbox prelude failed');
    }
    prelude.value.dispose();
    const res = ctx.evalCode(wrapProgram(job.code), 'program.js', { type: 'global' });
    if (res.error) {
      const err = errorOf(ctx, res.error);
      res.error.dispose();
      result = { ok: false, failure: classify(err, tripped), detail: `${err.name}: ${err.message}`.slice(0, 300) };
    } else {
      let out = readString(ctx, res.value);
      res.value.dispose();
      if (out === null) {
        const g = ctx.getProp(ctx.global, 'OUTPUT');
        out = readString(ctx, g);
        g.dispose();
      }
      result =
        out === null
          ? { ok: false, failure: 'no_string_output', detail: 'the program neither returned a string nor set OUTPUT' }
          : { ok: true, output: out, steps };
    }
  } catch (err) {
    poisoned = true;
    result = { ok: false, failure: 'runtime_error', detail: `host fault: ${(err as Error).message}`.slice(0, 300) };
  }
  try {
    ctx.dispose();
    rt.dispose();
  } catch {
    // A leaked handle or an aborted wasm heap: this module instance must not serve another run.
    poisoned = true;
  }
  return { result, poisoned };
}
