// Worker-thread entry: QuickJS runs synchronously, so it lives here and never blocks the gateway's
// event loop. One job at a time; a run that leaves the module in doubt ends this worker, and the
// pool starts a fresh one.
import { parentPort } from 'node:worker_threads';
import { getQuickJS } from 'quickjs-emscripten';
import { runProgram } from './quickjs-runner';
import type { SandboxJob, WorkerReply } from './sandbox.types';

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('sandbox.worker must run in a worker thread');
  const Q = await getQuickJS();
  port.on('message', (job: SandboxJob) => {
    const { result, poisoned } = runProgram(Q, job);
    const reply: WorkerReply = { id: job.id, result, poisoned };
    port.postMessage(reply);
    if (poisoned) process.exit(1);
  });
  port.postMessage('ready');
}

void main().catch((err: unknown) => {
  parentPort?.postMessage({ fatal: err instanceof Error ? err.message : String(err) });
  process.exit(1);
});
