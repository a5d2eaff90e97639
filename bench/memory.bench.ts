// Peak RSS of a gateway process (a separate child, preset agent) while it serves 32 concurrent
// ~1 MB requests (32 sessions, two rounds so the turn cache and session state fill up), sampled
// from /proc/<pid> every 20 ms — the node process itself, not a wrapper. Two configurations: the
// memory store alone, and the laptop default of `npm start` (gateway and admin in one process,
// memory + PGlite under a fresh DATA_DIR). The child is the built process entry itself (run
// `npm run build` first): `node apps/gateway/dist/main.js` with the chart's node flags and, for the default, the embedded
// `node apps/embedded/dist/main.js` that `npm start` runs, with the start script's node flags, as
// in production.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startReplica } from '../test/support/replicas';
import { chartGatewayCommand } from '../test/support/gateway-command';
import { npmStartCommand } from '../test/support/start-command';
import { agentSteps, openaiTurn } from '../test/support/transcripts';
import { table } from './bench-util';
import { rssOf, startScript } from './bench-procs';

const CONCURRENT = 32;
// Extra environment for the gateways (a JSON object), e.g. to compare a setting in one run.
const GATEWAY_ENV = JSON.parse(process.env.BENCH_GATEWAY_ENV ?? '{}') as Record<string, string>;
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;

async function measure(
  name: string,
  app: 'gateway' | 'embedded',
  env: Record<string, string>,
  upstream: string,
  bodies: Buffer[],
): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cg-mem-'));
  const gw = await startReplica(
    { PRESET: 'agent', OPENAI_UPSTREAM: upstream, ANTHROPIC_UPSTREAM: upstream, DATA_DIR: dataDir, ...GATEWAY_ENV, ...env },
    180_000,
    app,
    app === 'embedded' ? npmStartCommand().nodeArgs : chartGatewayCommand().nodeArgs,
  );
  const pid = gw.proc.pid!;
  // Idle: after boot settles (the first sample right after readiness still holds boot garbage).
  await new Promise((r) => setTimeout(r, 2000));
  const idle = rssOf(pid);
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 20);
  try {
    for (const body of bodies) {
      await Promise.all(
        Array.from({ length: CONCURRENT }, (_, i) =>
          fetch(`${gw.url}/openai/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-context-guru-session': `mem-${i}` },
            body,
          }).then((r) => r.text()),
        ),
      );
    }
  } finally {
    clearInterval(timer);
    peak = Math.max(peak, rssOf(pid));
    await gw.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return [name, `${(bodies[0]!.length / 1e6).toFixed(2)} MB`, String(CONCURRENT), mb(idle), mb(peak), '≤ 300 MB'];
}

export async function runMemory(): Promise<string> {
  const upstream = await startScript('upstream-stub.cjs');
  const steps = agentSteps(130, 11);
  const bodies = [Buffer.from(JSON.stringify(openaiTurn(steps, 120))), Buffer.from(JSON.stringify(openaiTurn(steps, 121)))];
  const rows: string[][] = [];
  try {
    rows.push(
      await measure('memory store (CG_ROLE=gateway, DURABLE_STORE=none)', 'gateway', { DURABLE_STORE: 'none' }, upstream.url, bodies),
    );
    rows.push(
      await measure(
        'npm start default (gateway + admin, memory + PGlite)',
        'embedded',
        { ADMIN_PORT: String(await freePort()) },
        upstream.url,
        bodies,
      ),
    );
  } finally {
    await upstream.stop();
  }
  return table(['configuration', 'body', 'concurrent requests', 'gateway RSS idle', 'gateway peak RSS', 'target'], rows);
}
