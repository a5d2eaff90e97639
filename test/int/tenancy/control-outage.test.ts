// Postgres goes away under a running replica: it keeps serving every tenant's last applied config
// and keys, /readyz names the generation it is stuck at, and a change made meanwhile (here a key
// revocation and a new config) is applied as soon as the database answers again. A replica that
// starts while Postgres is unreachable stays up, not ready, until the database answers; then it turns
// ready with the control plane it could not read at boot. REQUIRE_TENANT_KEY refuses keyless traffic.
import { createControlSeed, type ControlSeed } from '../../support/control-seed';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream';
import { startPrivateRedis, startReplica, type Replica } from '../../support/replicas';
import { jsonScript } from '../../support/scripted-model';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy';
import { postTurn, readyz, waitGeneration } from '../../support/tenant-replicas';
import { agentSteps, anthropicTurn, openaiTurn } from '../../support/transcripts';

jest.setTimeout(240_000);

const MARKER = /<<cg:[A-Za-z0-9_-]{1,64}>>/;
const HEAVY = { pipeline: ['format', 'mask'], components: { mask: { keep_recent: 2 } } };
const steps = agentSteps(10, 9);

let seed: ControlSeed;
let redis: { url: string; stop(): Promise<void> };
let upstream: FakeUpstream;
let proxy: TcpProxy;
let replica: Replica;
let env: Record<string, string>;
const keys: Record<string, { id: string; key: string }> = {};

beforeAll(async () => {
  redis = await startPrivateRedis();
  seed = await createControlSeed('outage', redis.url);
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  await seed.createTenant('a', HEAVY);
  keys.one = await seed.issueKey('a');
  keys.two = await seed.issueKey('a');
  const u = new URL(seed.dbUrl);
  proxy = await startTcpProxy(u.hostname, Number(u.port || 5432));
  u.port = String(proxy.port);
  env = {
    REDIS_URL: redis.url,
    DATABASE_URL: u.toString(),
    OPENAI_UPSTREAM: upstream.url,
    ANTHROPIC_UPSTREAM: upstream.url,
    REQUIRE_TENANT_KEY: 'true',
  };
  replica = await startReplica(env);
});

afterAll(async () => {
  await replica?.stop();
  await proxy?.close();
  await upstream?.close();
  await seed?.close();
  await redis?.stop();
});

let sessions = 0;
const as = (name: string) => ({ 'x-context-guru-key': keys[name]!.key, 'x-context-guru-session': `o${++sessions}` });
const last = () => upstream.requests[upstream.requests.length - 1]!;

describe('the control plane database goes away', () => {
  it('REQUIRE_TENANT_KEY: a request without a key gets 401 in its dialect', async () => {
    const o = await postTurn(replica, 'openai', openaiTurn(steps, 1));
    expect(o.status).toBe(401);
    expect(((await o.json()) as { error: { code: string } }).error.code).toBe('tenant_auth');
    const a = await postTurn(replica, 'anthropic', anthropicTurn(steps, 1));
    expect(a.status).toBe(401);
    expect(((await a.json()) as { error: { type: string } }).error.type).toBe('authentication_error');
    expect((await postTurn(replica, 'openai', openaiTurn(steps, 10), as('one'))).status).toBe(200);
    expect(last().raw).toMatch(MARKER);
  });

  it('keeps serving the last applied config and keys, and /readyz names the stale generation', async () => {
    const before = await readyz(replica);
    expect(before.body.control?.stale).toBe(false);
    await proxy.cut();
    // Changes the replica cannot read: a revocation and a config without offloading.
    await seed.revokeKey('a', keys.two!.id);
    const { generation } = await seed.pushConfig('a', { preset: 'safe' });
    // Redis announced it; the read fails; nothing the replica serves is dropped.
    let body = (await readyz(replica)).body;
    for (let i = 0; i < 100 && !(body.control?.latest === generation && body.control.error); i++) {
      await new Promise((r) => setTimeout(r, 50));
      body = (await readyz(replica)).body;
    }
    expect(body.control).toMatchObject({ loaded: true, stale: true, generation: before.body.control!.generation, latest: generation });
    // Still in rotation (degraded): a dead database must not take every replica out of service.
    expect((await readyz(replica)).status).toBe(200);
    expect(body.control?.error).toBeDefined();
    for (const name of ['one', 'two']) {
      const res = await postTurn(replica, 'openai', openaiTurn(steps, 10), as(name));
      expect(res.status).toBe(200);
      expect(last().raw).toMatch(MARKER);
    }
    // Back: the revocation and the new config are applied on the next tick.
    await proxy.restore();
    await waitGeneration(replica, generation);
    expect((await readyz(replica)).body.control).toMatchObject({ stale: false, generation });
    expect((await postTurn(replica, 'openai', openaiTurn(steps, 1), as('two'))).status).toBe(401);
    expect((await postTurn(replica, 'openai', openaiTurn(steps, 10), as('one'))).status).toBe(200);
    expect(last().raw).not.toMatch(MARKER);
  });

  it('a replica that starts while Postgres is unreachable stays up and not ready, then turns ready once it answers', async () => {
    await proxy.cut();
    const started: Replica[] = [];
    try {
      // Both boot paths: migrating on boot (the default) and waiting for the Helm Job's migration.
      for (const migrate of ['true', 'false'])
        started.push(await startReplica({ ...env, MIGRATE_ON_BOOT: migrate }, 60_000, false, [], '/healthz'));
      // Up (no crash loop) and not ready, for as long as the database does not answer.
      for (let i = 0; i < 10; i++) {
        for (const r of started) {
          expect(r.proc.exitCode).toBeNull();
          const { status, body } = await readyz(r);
          expect(status).toBe(503);
          expect(body).toMatchObject({ ready: false, control: { loaded: false } });
          expect(body.control?.error).toBeDefined();
        }
        await new Promise((res) => setTimeout(res, 200));
      }
      await proxy.restore();
      for (const r of started) {
        await waitReady(r);
        // It reads the control plane it could not read at boot: keys, revocations and the config.
        expect((await postTurn(r, 'openai', openaiTurn(steps, 1), as('two'))).status).toBe(401);
        expect((await postTurn(r, 'openai', openaiTurn(steps, 10), as('one'))).status).toBe(200);
        expect(r.stderr()).toMatch(/database unreachable at boot/);
      }
    } finally {
      await proxy.restore();
      for (const r of started) await r.stop();
    }
  });
});

async function waitReady(r: Replica, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await readyz(r)).status !== 200) {
    if (Date.now() > deadline) throw new Error(`replica ${r.url} not ready ${timeoutMs} ms after the database came back\n${r.stderr()}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}
