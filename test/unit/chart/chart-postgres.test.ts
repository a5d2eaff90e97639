// The chart's Postgres connection budget: every gateway and admin pod gets PG_POOL_MAX from
// postgres.poolMax, and with postgres.maxConnections set, rendering fails when the most the
// release can open (max gateway pods × poolMax + admin pods × poolMax + the migration Job's one)
// exceeds it — the HPA's maximum counts, not today's replica count. A migration URL of its own
// (secrets.keys.migrationDatabaseUrl) reaches the migration Job only, and only when named.
import { helm, CHART, render } from '../../support/helm';
import { configMaps, deployment, job, onlyContainer } from '../../support/k8s-models';

/** PG_POOL_MAX as the Deployment's container sees it (a literal or from the env ConfigMap). */
function poolMaxOf(set: string[], suffix: '-gateway' | '-admin'): string | undefined {
  const objs = render({ set });
  const c = onlyContainer(deployment(objs, suffix));
  const literal = c.env?.find((e) => e.name === 'PG_POOL_MAX')?.value;
  if (literal !== undefined) return literal;
  const fromMaps = (c.envFrom ?? []).map((f) => f.configMapRef?.name);
  return configMaps(objs).find((m) => fromMaps.includes(m.metadata?.name) && m.data?.PG_POOL_MAX !== undefined)?.data?.PG_POOL_MAX;
}

const template = (set: string[]) => helm(['template', 'cg', CHART, ...set.flatMap((s) => ['--set', s])]);

it('passes postgres.poolMax to the gateway and the admin as PG_POOL_MAX', () => {
  expect(poolMaxOf([], '-gateway')).toBe('10');
  expect(poolMaxOf(['postgres.poolMax=4'], '-admin')).toBe('4');
});

it('fails when the most connections the release can open exceed postgres.maxConnections', () => {
  // HPA up to 10 gateways + 1 admin, 10 each, + 1: 111 > 100.
  const over = template(['postgres.maxConnections=100', 'gateway.autoscaling.enabled=true']);
  expect(over.status).not.toBe(0);
  expect(over.stderr).toMatch(/Postgres connections: up to 111 .* exceed postgres.maxConnections 100/);
  // The same replicas at 9 per pod: 100, within.
  expect(template(['postgres.maxConnections=100', 'gateway.autoscaling.enabled=true', 'postgres.poolMax=9']).status).toBe(0);
  // Without the HPA it is replicaCount (2) that counts: 2 × 10 + 10 + 1 = 31.
  expect(template(['postgres.maxConnections=31']).status).toBe(0);
  expect(template(['postgres.maxConnections=30']).status).not.toBe(0);
});

it('gives the migration Job MIGRATION_DATABASE_URL from the Secret when secrets.keys.migrationDatabaseUrl names a key, else none', () => {
  const named = render({ set: ['secrets.existingSecret=cg-secrets', 'secrets.keys.migrationDatabaseUrl=direct-url'] });
  const env = onlyContainer(job(named, '-migrate')).env ?? [];
  expect(env.find((e) => e.name === 'MIGRATION_DATABASE_URL')).toEqual({
    name: 'MIGRATION_DATABASE_URL',
    valueFrom: { secretKeyRef: { name: 'cg-secrets', key: 'direct-url' } },
  });
  // DATABASE_URL stays: the runner falls back to it, and the app pods serve from it alone.
  expect(env.map((e) => e.name)).toContain('DATABASE_URL');
  for (const suffix of ['-gateway', '-admin'] as const) {
    expect(JSON.stringify(deployment(named, suffix))).not.toContain('MIGRATION_DATABASE_URL');
  }
  expect(JSON.stringify(render())).not.toContain('MIGRATION_DATABASE_URL');
});

it('refuses a migrationDatabaseUrl key that is not a Secret key name', () => {
  const bad = template(['secrets.keys.migrationDatabaseUrl=not a key']);
  expect(bad.status).not.toBe(0);
  expect(bad.stderr).toMatch(/migrationDatabaseUrl/);
});
