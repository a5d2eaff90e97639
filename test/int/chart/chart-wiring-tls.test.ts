// The chart's wiring once more, against stores that speak TLS only: a PostgreSQL cluster whose
// pg_hba has `hostssl` lines only and a redis-server on a TLS port only (test/support/tls-servers),
// both presenting a certificate from a throwaway private CA. The chart is rendered with the CA
// carried the way docs/kubernetes.md's production values carry it: a Secret volume through
// extraVolumes/extraVolumeMounts, and REDIS_TLS_CA_FILE/PGSSLROOTCERT pointing at the mounted
// file through extraEnv; the test Secret holds `sslmode=verify-full` and `rediss://` URLs. With
// no kubelet, the Secret volume is projected into a scratch folder and the mounted path remapped
// to it (printed). The migration Job, admin and a gateway replica run from the rendered commands:
// the migration lands on the TLS Postgres, both become ready, a request is served upstream and
// the tenant's turn record lands in the TLS Redis; a plaintext connection is turned away.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { PgSqlClient } from '@context-guru/storage';
import { Redis } from 'ioredis';
import { runCommand, waitFor, type Proc, type SecretData } from '../../support/chart-processes';
import {
  appSecret,
  chartPods,
  issueTenantKey,
  migrationCount,
  openAiChat,
  probes,
  startChartUpstream,
  wiringSet,
} from '../../support/chart-pods';
import type { FakeUpstream } from '../../support/fake-upstream';
import { render, scratchValues } from '../../support/helm';
import { parseDockerfile, stageImageTree } from '../../support/image-tree';
import { deployment, job, onlyContainer } from '../../support/k8s-models';
import { makeCa, scratchDir, serverCert, startTlsPostgres, startTlsRedis } from '../../support/tls-servers';
import type { Ca, TlsPostgres, TlsRedis } from '../../support/tls-servers';

jest.setTimeout(90_000);

const tag = `${process.pid}_${Date.now().toString(36)}`;
const prefix = `cgchartls${tag}:`;
const ADMIN_TOKEN = `test-admin-token-${tag}`;
const OPS_TOKEN = `test-ops-token-of-the-chart-${tag}`;
const CA_MOUNT = '/etc/context-guru/ca';

// As an operator would write them (docs/kubernetes.md, "Production values"): the CA Secret
// mounted into every container, and both clients told where it is.
const tlsValues = `
extraEnv:
  - { name: REDIS_TLS_CA_FILE, value: ${CA_MOUNT}/ca.crt }
  - { name: PGSSLROOTCERT, value: ${CA_MOUNT}/ca.crt }
extraVolumes:
  - name: internal-ca
    secret: { secretName: internal-ca, items: [{ key: ca.crt, path: ca.crt }] }
extraVolumeMounts:
  - { name: internal-ca, mountPath: ${CA_MOUNT}, readOnly: true }
`;

describe('the chart against TLS-only Postgres and Redis, the CA mounted through extraVolumes', () => {
  const stage = parseDockerfile();
  const procs: Proc[] = [];
  const secrets: SecretData = {};
  let scratch: ReturnType<typeof scratchDir>;
  let ca: Ca;
  let redis: TlsRedis;
  let pg: TlsPostgres;
  let upstream: FakeUpstream;
  let app: string;
  let pods: ReturnType<typeof chartPods>;

  beforeAll(async () => {
    scratch = scratchDir();
    ca = await makeCa(scratch.dir, 'cg-chart-ca');
    const server = await serverCert(scratch.dir, ca, 'server', ['127.0.0.1']);
    [redis, pg, upstream] = await Promise.all([
      startTlsRedis(scratch.dir, ca, server),
      startTlsPostgres(scratch.dir, server),
      startChartUpstream(),
    ]);
    secrets['context-guru-secrets'] = appSecret({
      databaseUrl: `${pg.url()}?sslmode=verify-full`,
      redisUrl: redis.url,
      adminToken: ADMIN_TOKEN,
      opsToken: OPS_TOKEN,
    });
    secrets['internal-ca'] = { 'ca.crt': readFileSync(ca.cert, 'utf8') };
    const values = scratchValues();
    try {
      const objs = render({ values: [values.file(tlsValues)], set: wiringSet(prefix) });
      app = stageImageTree(stage);
      pods = chartPods({ objs, secrets, stage, upstreamUrl: upstream.url, volumesDir: join(scratch.dir, 'volumes') });
      [gateway, admin, migrate] = [deployment(objs, '-gateway'), deployment(objs, '-admin'), job(objs, '-migrate')];
    } finally {
      values.remove();
    }
  });
  let gateway: ReturnType<typeof deployment>;
  let admin: ReturnType<typeof deployment>;
  let migrate: ReturnType<typeof job>;

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await upstream?.close();
    await redis?.stop();
    await pg?.stop();
    scratch?.remove();
    if (app) rmSync(join(app, '..'), { recursive: true, force: true });
    process.stdout.write(`chart → local mapping:\n  ${pods?.mapping.join('\n  ')}\n`);
  });

  it('the servers have no plaintext way in: Postgres turns away a connection without TLS', async () => {
    const plain = new PgSqlClient({ connectionString: `${pg.url()}?sslmode=disable`, max: 1 });
    try {
      await expect(plain.query('SELECT 1')).rejects.toThrow(/no pg_hba.conf entry .*no encryption/);
    } finally {
      await plain.close();
    }
  });

  it('migration Job, admin and a gateway run from the rendered commands over verified TLS, and a request is served', async () => {
    // Every container carries the mount and both variables, pointing at the projected CA.
    const mEnv = await pods.podEnv(migrate, undefined, 'migration');
    expect(mEnv.env.PGSSLROOTCERT).toBe(join(scratch.dir, 'volumes', 'migration', 'internal-ca', 'ca.crt'));
    expect(readFileSync(mEnv.env.PGSSLROOTCERT!, 'utf8')).toBe(readFileSync(ca.cert, 'utf8'));
    expect(mEnv.env.DATABASE_URL).toContain('sslmode=verify-full');

    const migration = runCommand('migration', onlyContainer(migrate).command!, mEnv.env, app);
    procs.push(migration);
    expect(await migration.exited).toEqual({ code: 0, signal: null });
    expect(migration.output()).toMatch(/"msg":"migrations complete","target":"postgres"/);
    const verified = new PgSqlClient({ connectionString: `${pg.url()}?sslmode=verify-full&sslrootcert=${ca.cert}`, max: 1 });
    try {
      expect((await verified.query('SELECT count(*)::int AS n FROM schema_migrations'))[0]!.n).toBe(migrationCount(app));
    } finally {
      await verified.close();
    }

    const ad = await pods.podEnv(admin, 'ADMIN_PORT', 'admin-0');
    const gw = await pods.podEnv(gateway, 'PORT', 'gateway-0');
    for (const e of [ad.env, gw.env])
      expect([e.REDIS_TLS_CA_FILE, e.PGSSLROOTCERT].every((f) => f?.endsWith('/internal-ca/ca.crt'))).toBe(true);
    expect(gw.env.REDIS_URL).toMatch(/^rediss:\/\//);
    const adminProc = runCommand('admin-0', onlyContainer(admin).command!, ad.env, app);
    const gatewayProc = runCommand('gateway-0', onlyContainer(gateway).command!, gw.env, app);
    procs.push(adminProc, gatewayProc);
    const adminBase = `http://127.0.0.1:${ad.port}`;
    const base = `http://127.0.0.1:${gw.port}`;
    for (const path of probes(onlyContainer(admin))) await waitFor(adminProc, `${adminBase}${path}`, 200);
    for (const path of probes(onlyContainer(gateway))) await waitFor(gatewayProc, `${base}${path}`, 200);

    const tenantKey = await issueTenantKey(adminBase, ADMIN_TOKEN, 'tls');
    await waitFor(gatewayProc, `${base}/t/${tenantKey}/stats`, 200);
    const tlsRedis = new Redis(redis.url, { tls: { ca: readFileSync(ca.cert, 'utf8') } });
    try {
      const before = await tlsRedis.keys(`${prefix}*`);
      const res = await openAiChat(base, tenantKey, 'hello over TLS');
      expect(res.status).toBe(200);
      expect(JSON.stringify(await res.json())).toContain('served through the chart');
      expect(upstream.requests.map((r) => r.path)).toEqual(['/v1/chat/completions']);
      // The tenant's turn record, written by the gateway through its rediss:// connection.
      const added = (await tlsRedis.keys(`${prefix}*`)).filter((k) => !before.includes(k));
      expect(added).toContainEqual(expect.stringMatching(new RegExp(`^${prefix}\\{tls\\}:turn:`)));
    } finally {
      tlsRedis.disconnect();
    }
    for (const p of [gatewayProc, adminProc]) expect(await p.stop()).toEqual({ code: 0, signal: null });
  });
});
