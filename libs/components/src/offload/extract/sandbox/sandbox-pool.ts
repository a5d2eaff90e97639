// A small, long-lived pool of sandbox workers. Every job carries a host-side deadline on top of
// the interpreter's own: a worker that hangs, dies or faults is terminated and replaced, and its
// job resolves to a named failure — a run never throws and never blocks the event loop.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { DEFAULT_LIMITS, type SandboxJob, type SandboxLimits, type SandboxResult, type WorkerReply } from './sandbox.types';

/** Host deadline beyond the interpreter's wall budget (message passing, a slow regex helper). */
const GRACE_MS = 1000;
/** First start can transpile the worker (source tree) and instantiate the wasm module. */
const STARTUP_MS = 20_000;
const MAX_QUEUE = 64;
/** Consecutive failed starts after which the pool stops trying (a broken install, not bad luck). */
const MAX_START_FAILURES = 3;

interface Pending {
  job: SandboxJob;
  resolve: (r: SandboxResult) => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  busy?: Pending;
  timer?: NodeJS.Timeout;
}

/** The compiled worker beside this file, or (source tree: tests, bench) a swc-transpiling bootstrap. */
function spawnWorker(): Worker {
  const js = join(__dirname, 'sandbox.worker.js');
  if (existsSync(js)) return new Worker(js);
  const entry = join(__dirname, 'sandbox.worker.ts');
  const bootstrap = `
const { workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { transformSync } = require(workerData.swc);
require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename, jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
require(workerData.entry);`;
  return new Worker(bootstrap, { eval: true, workerData: { entry, swc: require.resolve('@swc/core') } });
}

export class SandboxPool {
  private readonly slots = new Set<Slot>();
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private startFailures = 0;
  private closed = false;
  /** Workers replaced after a timeout, crash or fault (exposed for tests and stats). */
  replaced = 0;

  constructor(
    private readonly size = 2,
    private readonly spawn: () => Worker = spawnWorker,
  ) {}

  run(code: string, input: string, limits: SandboxLimits = DEFAULT_LIMITS): Promise<SandboxResult> {
    if (this.closed || this.startFailures >= MAX_START_FAILURES) {
      return Promise.resolve({ ok: false, failure: 'sandbox_unavailable', detail: 'the sandbox cannot start' });
    }
    if (this.queue.length >= MAX_QUEUE) {
      return Promise.resolve({ ok: false, failure: 'sandbox_busy', detail: 'too many programs waiting' });
    }
    return new Promise((resolve) => {
      this.queue.push({ job: { id: this.nextId++, code, input, limits }, resolve });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) p.resolve({ ok: false, failure: 'sandbox_unavailable', detail: 'sandbox closed' });
    await Promise.all([...this.slots].map((s) => this.retire(s, { ok: false, failure: 'sandbox_unavailable', detail: 'sandbox closed' })));
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.busy) continue;
      const next = this.queue.shift();
      if (next === undefined) return;
      this.dispatch(slot, next);
    }
    const starting = [...this.slots].some((s) => !s.ready);
    if (this.queue.length && this.slots.size < this.size && !starting) this.start();
  }

  private dispatch(slot: Slot, p: Pending): void {
    slot.busy = p;
    slot.worker.ref();
    slot.timer = setTimeout(() => {
      void this.retire(slot, { ok: false, failure: 'worker_timeout', detail: `no answer within ${p.job.limits.wallMs + GRACE_MS} ms` });
    }, p.job.limits.wallMs + GRACE_MS);
    slot.worker.postMessage(p.job);
  }

  private start(): void {
    const worker = this.spawn();
    const slot: Slot = { worker, ready: false };
    this.slots.add(slot);
    worker.unref();
    slot.timer = setTimeout(() => this.failStart(slot, 'worker did not start in time'), STARTUP_MS);
    worker.on('message', (msg: unknown) => this.onMessage(slot, msg));
    worker.on('error', (err) => {
      if (!slot.ready) this.failStart(slot, err.message);
    });
    worker.on('exit', () => {
      if (!this.slots.has(slot)) return;
      if (!slot.ready) return this.failStart(slot, 'worker exited during start');
      this.replaced++;
      void this.retire(slot, { ok: false, failure: 'worker_crashed', detail: 'the worker exited mid-run' });
    });
  }

  private onMessage(slot: Slot, msg: unknown): void {
    if (msg === 'ready') {
      clearTimeout(slot.timer);
      slot.ready = true;
      this.startFailures = 0;
      this.pump();
      return;
    }
    if (typeof msg === 'object' && msg !== null && 'fatal' in msg) {
      this.failStart(slot, String((msg as { fatal: unknown }).fatal));
      return;
    }
    const reply = msg as WorkerReply;
    const p = slot.busy;
    if (!p || p.job.id !== reply.id) return;
    clearTimeout(slot.timer);
    slot.busy = undefined;
    slot.worker.unref();
    p.resolve(reply.result);
    // A poisoned worker exits by itself; the exit handler retires the slot.
    if (!reply.poisoned) this.pump();
  }

  private failStart(slot: Slot, why: string): void {
    if (!this.slots.has(slot)) return;
    this.startFailures++;
    void this.retire(slot);
    if (this.startFailures >= MAX_START_FAILURES) {
      for (const p of this.queue.splice(0)) p.resolve({ ok: false, failure: 'sandbox_unavailable', detail: why });
    } else {
      this.pump();
    }
  }

  /** Removes a slot, terminating its worker and settling its job; then refills if work waits. */
  private async retire(slot: Slot, outcome?: SandboxResult): Promise<void> {
    if (!this.slots.delete(slot)) return;
    clearTimeout(slot.timer);
    const p = slot.busy;
    slot.busy = undefined;
    if (p && outcome) {
      if (outcome.ok === false && outcome.failure === 'worker_timeout') this.replaced++;
      p.resolve(outcome);
    }
    await slot.worker.terminate().catch(() => undefined);
    if (!this.closed) this.pump();
  }
}

let shared: SandboxPool | undefined;

/** The process-wide pool (created on first use; its idle workers never keep the process alive). */
export function sharedSandbox(): SandboxPool {
  shared ??= new SandboxPool();
  return shared;
}

export async function closeSharedSandbox(): Promise<void> {
  const pool = shared;
  shared = undefined;
  await pool?.close();
}
