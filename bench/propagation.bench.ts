// Control-plane propagation: three gateway replicas (real processes) share Redis and Postgres while
// a steady load runs on all of them; the bench makes a series of control-plane changes (config
// pushes, rollbacks, key revocations) and measures, per change and per replica, the time from the
// change's commit to that replica serving it: as the replica measures it, and as a client
// polling /readyz sees it. Needs DATABASE_URL (loopback
// default) and redis-server on PATH.
import { createControlSeed } from '../test/support/control-seed';
import { startFakeUpstream } from '../test/support/fake-upstream';
import { startPrivateRedis, startReplica, type Replica } from '../test/support/replicas';
import { jsonScript } from '../test/support/scripted-model';
import { postTurn, readyz } from '../test/support/tenant-replicas';
import { agentSteps, openaiTurn } from '../test/support/transcripts';
import { percentile, table } from './bench-util';

const CHANGES = 40;
const LOAD_CONCURRENCY = 6;

/** Client-observed ms until the replica's /readyz shows the generation, and the replica's own figure. */
async function appliedAt(r: Replica, generation: number, since: number): Promise<[number, number]> {
  for (;;) {
    const { body } = await readyz(r);
    const c = body.control as { generation: number; lastPropagationMs?: number } | undefined;
    if ((c?.generation ?? -1) >= generation) return [performance.now() - since, c?.lastPropagationMs ?? NaN];
    if (performance.now() - since > 30_000) throw new Error(`replica ${r.url} never applied generation ${generation}`);
    await new Promise((res) => setTimeout(res, 2));
  }
}

export async function runPropagation(): Promise<string> {
  const redis = await startPrivateRedis();
  const seed = await createControlSeed('bench_propagation', redis.url);
  const upstream = await startFakeUpstream(jsonScript({ expand: false }));
  const replicas: Replica[] = [];
  let stop = false;
  try {
    await seed.createTenant('team', { preset: 'agent' });
    const key = (await seed.issueKey('team')).key;
    const env = { REDIS_URL: redis.url, DATABASE_URL: seed.dbUrl, OPENAI_UPSTREAM: upstream.url, ANTHROPIC_UPSTREAM: upstream.url };
    replicas.push(...(await Promise.all([startReplica(env), startReplica(env), startReplica(env)])));
    const steps = agentSteps(12, 3);
    let served = 0;
    const load = Array.from({ length: LOAD_CONCURRENCY }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const res = await postTurn(replicas[(w + i) % 3]!, 'openai', openaiTurn(steps, 1 + (i % 12)), {
          'x-context-guru-key': key,
          'x-context-guru-session': `w${w}`,
        });
        await res.arrayBuffer();
        served++;
      }
    });
    const samples: number[] = [];
    const internal: number[] = [];
    const t0 = performance.now();
    for (let c = 0; c < CHANGES; c++) {
      const started = performance.now();
      let generation: number;
      if (c % 4 === 3) {
        const extra = await seed.issueKey('team');
        generation = await seed.revokeKey('team', extra.id);
      } else if (c % 2 === 1) generation = await seed.activateConfig('team', 1);
      else generation = (await seed.pushConfig('team', { preset: c % 4 === 0 ? 'balanced' : 'coding' })).generation;
      for (const [observed, own] of await Promise.all(replicas.map((r) => appliedAt(r, generation, started)))) {
        samples.push(observed);
        internal.push(own);
      }
      await new Promise((res) => setTimeout(res, 50));
    }
    const seconds = (performance.now() - t0) / 1000;
    stop = true;
    await Promise.all(load);
    const row = (what: string, xs: number[]) => [
      what,
      String(xs.length),
      ...[50, 90, 99].map((p) => percentile(xs, p).toFixed(0)),
      Math.max(...xs).toFixed(0),
    ];
    return [
      `${CHANGES} control-plane changes (config push, rollback, key issue + revoke) while ${LOAD_CONCURRENCY} clients load three replicas (${(served / seconds).toFixed(0)} req/s); per change and replica, in ms:`,
      '',
      table(
        ['measured', 'samples', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
        [
          row("replica: commit → applied (its own clock: apply time − the change's changed_at)", internal.filter(Number.isFinite)),
          row('client: write call → /readyz shows the generation (includes the write and the poll)', samples),
        ],
      ),
    ].join('\n');
  } finally {
    stop = true;
    await Promise.all(replicas.map((r) => r.stop()));
    await upstream.close();
    await seed.close();
    await redis.stop();
  }
}
