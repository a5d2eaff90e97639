// What crosses the worker boundary: a program, its input and its limits in; a string or a named
// failure out. Plain data only (structured clone), so the host never shares a heap with the program.

export interface SandboxLimits {
  /** QuickJS heap cap in bytes. */
  memoryBytes: number;
  /** Wall-clock budget of one run, enforced inside the interpreter and again by the host. */
  wallMs: number;
  /** Interrupt-handler polls allowed (QuickJS polls about every 10k bytecode steps). */
  maxSteps: number;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  memoryBytes: 32 * 1024 * 1024,
  wallMs: 2000,
  maxSteps: 4000,
};

/** Interpreter stack cap: above 256 KB deep recursion overflows the host V8 stack instead. */
export const MAX_STACK_BYTES = 256 * 1024;

export interface SandboxJob {
  id: number;
  code: string;
  input: string;
  limits: SandboxLimits;
}

/** Why a program produced no usable output; each maps to one rejection slug in stats and tests. */
export type SandboxFailure =
  | 'syntax_error'
  | 'runtime_error'
  | 'interrupted_wall_clock'
  | 'interrupted_step_budget'
  | 'out_of_memory'
  | 'stack_overflow'
  | 'no_string_output'
  | 'worker_timeout'
  | 'worker_crashed'
  | 'sandbox_unavailable'
  | 'sandbox_busy';

export type SandboxResult = { ok: true; output: string; steps: number } | { ok: false; failure: SandboxFailure; detail: string };

export type WorkerReply = { id: number; result: SandboxResult; poisoned?: boolean };
