// Peak RSS of a gateway process (a separate child, preset agent, memory store) while it serves 32
// concurrent ~1 MB requests (32 sessions, two rounds so the turn cache and session state fill up),
// sampled from /proc every 20 ms. The child is the built `node apps/gateway/dist/main.js` (run
// `npm run build` first), as in production.
import { readFileSync } from 'node:fs';
import { startReplica } from '../test/support/replicas';
import { agentSteps, openaiTurn } from '../test/support/transcripts';
import { table } from './bench-util';
import { startScript } from './bench-procs';

const CONCURRENT = 32;

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

export async function runMemory(): Promise<string> {
  const upstream = await startScript('upstream-stub.cjs');
  const gw = await startReplica({ PRESET: 'agent', OPENAI_UPSTREAM: upstream.url, ANTHROPIC_UPSTREAM: upstream.url, DURABLE_STORE: 'none' }, 60_000, true);
  const pid = gw.proc.pid!;
  const steps = agentSteps(130, 11);
  const bodies = [Buffer.from(JSON.stringify(openaiTurn(steps, 120))), Buffer.from(JSON.stringify(openaiTurn(steps, 121)))];
  const idle = rssOf(pid);
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 20);
  try {
    for (const body of bodies) {
      await Promise.all(
        Array.from({ length: CONCURRENT }, (_, i) =>
          fetch(`${gw.url}/openai/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-context-guru-session': `mem-${i}` }, body }).then((r) => r.text()),
        ),
      );
    }
  } finally {
    clearInterval(timer);
    peak = Math.max(peak, rssOf(pid));
    await gw.stop();
    await upstream.stop();
  }
  const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;
  return table(['body', 'concurrent requests', 'gateway RSS idle', 'gateway peak RSS', 'target'], [[`${(bodies[0]!.length / 1e6).toFixed(2)} MB`, String(CONCURRENT), mb(idle), mb(peak), '≤ 300 MB']]);
}
