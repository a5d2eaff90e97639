// The production values file docs/kubernetes.md shows is charts/context-guru/ci/production-values.yaml
// word for word, and `helm template` renders from it what the page says it sets up — so neither the
// page nor the file can drift from the chart.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAdminEnv } from '../../../apps/admin/src/admin-env';
import { parseEnv } from '../../../apps/gateway/src/env';
import { keysRead, resolveEnv } from '../../support/chart-processes';
import { makeCa, scratchDir } from '../../support/tls-servers';
import { CHART, ROOT, find, render, type K8sObject } from '../../support/helm';
import { deployment, job, onlyContainer, podSpec, validateObject } from '../../support/k8s-models';

const FILE = join(CHART, 'ci', 'production-values.yaml');
const CA_PATH = '/etc/context-guru/ca/ca.crt';
const BEGIN = '<!-- production-values:begin (charts/context-guru/ci/production-values.yaml) -->';
const END = '<!-- production-values:end -->';
const objs = render({ values: [FILE] });
const workloads = [deployment(objs, '-gateway'), deployment(objs, '-admin'), job(objs, '-migrate')];
const secrets = {
  'context-guru-prod': {
    'database-url': 'postgres://cg:pw@pgbouncer.data.svc:6432/context_guru?sslmode=verify-full',
    'redis-sentinels': 'rediss://:pw@10.40.0.11:26379,10.40.0.12:26379',
    'admin-token': 'test-admin-token-of-the-production-values',
    'encryption-key': randomBytes(32).toString('base64'),
  },
};

it('docs/kubernetes.md shows the file as it is', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'kubernetes.md'), 'utf8');
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  expect(a).toBeGreaterThan(0);
  expect(doc.slice(a + BEGIN.length, b).trim()).toBe(`\`\`\`yaml\n${readFileSync(FILE, 'utf8').trim()}\n\`\`\``);
});

it('renders keyed tenants only, Sentinel, PgBouncer pool sizing and the CA in every container', () => {
  for (const o of objs) validateObject(o);
  const gw = resolveEnv(onlyContainer(workloads[0]!), objs, secrets, {}, { 'metadata.name': 'p' }).env;
  expect(gw).toMatchObject({
    REQUIRE_TENANT_KEY: 'true',
    PG_POOL_MAX: '4',
    REDIS_SENTINEL_MASTER: 'cg-primary',
    WRITE_BEHIND_MAX_MB: '192',
  });
  expect(gw.REDIS_SENTINELS).toMatch(/^rediss:\/\//);
  expect(gw.REDIS_URL).toBeUndefined();
  for (const w of workloads) {
    const c = onlyContainer(w);
    for (const name of ['REDIS_TLS_CA_FILE', 'PGSSLROOTCERT']) expect(c.env?.find((e) => e.name === name)?.value).toBe(CA_PATH);
    expect(c.volumeMounts?.find((m) => m.mountPath === '/etc/context-guru/ca')?.readOnly).toBe(true);
    expect(podSpec(w).volumes?.find((v) => v.name === 'internal-ca')?.secret?.secretName).toBe('internal-ca');
  }
  // 24 × 4 + 2 × 4 + 1 = 105 ≤ 150; at 6 per pod, 157 would not fit.
  expect(() => render({ values: [FILE], set: ['postgres.poolMax=6'] })).toThrow(
    /Postgres connections: up to 157 .* exceed postgres.maxConnections 150/,
  );
});

it('names the CA in variables the gateway and the admin read at boot, and accept with a real CA file', async () => {
  const scratch = scratchDir();
  try {
    const ca = await makeCa(scratch.dir, 'internal-ca');
    // The mount, here: the CA path points at a real PEM file.
    const local = (env: Record<string, string>) =>
      Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === CA_PATH ? ca.cert : v]));
    const gw = keysRead(parseEnv, local(resolveEnv(onlyContainer(workloads[0]!), objs, secrets, {}, { 'metadata.name': 'p' }).env));
    const ad = keysRead(parseAdminEnv, local(resolveEnv(onlyContainer(workloads[1]!), objs, secrets, {}).env));
    for (const r of [gw, ad]) for (const name of ['REDIS_TLS_CA_FILE', 'PGSSLROOTCERT']) expect(r.read).toContain(name);
    expect(gw.parsed.databaseUrl).toContain('sslmode=verify-full');
  } finally {
    scratch.remove();
  }
});

it('renders the HPA, PDB, ServiceMonitor, PrometheusRule, Ingress and NetworkPolicies it names', () => {
  const kinds = (k: string) => objs.filter((o) => o.kind === k).map((o) => o.metadata.name);
  expect(kinds('HorizontalPodAutoscaler')).toEqual(['cg-context-guru-gateway']);
  expect(kinds('PodDisruptionBudget')).toEqual(['cg-context-guru-gateway']);
  expect(kinds('ServiceMonitor')).toEqual(['cg-context-guru-gateway']);
  expect(find(objs, 'PrometheusRule', 'cg-context-guru').metadata.labels?.release).toBe('kube-prometheus-stack');
  const ing = find(objs, 'Ingress', '-gateway') as K8sObject & { spec: { tls: unknown[] } };
  expect(ing.metadata.annotations?.['nginx.ingress.kubernetes.io/proxy-buffering']).toBe('off');
  expect(Number(ing.metadata.annotations?.['nginx.ingress.kubernetes.io/proxy-read-timeout'])).toBeGreaterThan(900);
  expect(ing.spec.tls).toHaveLength(1);
  expect(kinds('NetworkPolicy').sort()).toEqual(['cg-context-guru-admin', 'cg-context-guru-gateway', 'cg-context-guru-migration']);
  expect(find(objs, 'NetworkPolicy', '-migration').metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
  const gw = workloads[0]!;
  expect(gw.metadata?.annotations?.['reloader.stakater.com/auto']).toBe('true');
  expect(podSpec(gw).priorityClassName).toBe('platform-critical');
  expect(podSpec(gw).topologySpreadConstraints?.every((t) => t.whenUnsatisfiable === 'DoNotSchedule')).toBe(true);
  expect(onlyContainer(gw).resources?.limits?.cpu).toBe('2');
});
