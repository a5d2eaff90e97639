// The chart's Redis topologies: `redis.topology` picks which Secret key each pod reads (REDIS_URL,
// REDIS_CLUSTER_NODES, or REDIS_SENTINELS with the master's name), and the environment the
// gateway and admin Deployments render — the Secret's values filled in — is one the gateway's and
// the admin's own parsers accept as that topology. A Sentinel topology without a master name
// is refused by the schema.
import { parseAdminEnv } from '../../../apps/admin/src/admin-env';
import { parseEnv } from '../../../apps/gateway/src/env';
import { CHART, helm, render } from '../../support/helm';
import { deployment, onlyContainer } from '../../support/k8s-models';

/** What the Secret holds in this test (every key the chart may read). */
const SECRET: Record<string, string> = {
  DATABASE_URL: 'postgres://cg@db:5432/cg',
  REDIS_URL: 'redis://cache:6379',
  REDIS_CLUSTER_NODES: 'rediss://cg:pw@node-0:6379,node-1:6379,node-2:6379',
  REDIS_SENTINELS: 'sentinel-0:26379,sentinel-1:26379,sentinel-2:26379',
  REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
  CG_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
};

/** The container's environment as the pod would see it: literal values and Secret keys resolved. */
function podEnv(set: string[], suffix: '-gateway' | '-admin'): Record<string, string> {
  const c = onlyContainer(deployment(render({ set }), suffix));
  const out: Record<string, string> = {};
  for (const e of c.env ?? []) {
    const key = e.valueFrom?.secretKeyRef?.key;
    const v = e.value ?? (key ? SECRET[key] : undefined);
    if (v !== undefined) out[e.name] = v;
  }
  return out;
}

const redisVars = (env: Record<string, string>) => Object.keys(env).filter((k) => k.startsWith('REDIS_') && k !== 'REDIS_PREFIX');

describe.each(['-gateway', '-admin'] as const)('the %s Deployment', (suffix) => {
  const parse = (env: Record<string, string>) => (suffix === '-gateway' ? parseEnv(env).redisUrl : parseAdminEnv(env).redisUrl);

  it('single (default): REDIS_URL from the Secret, nothing else', () => {
    const env = podEnv([], suffix);
    expect(redisVars(env)).toEqual(['REDIS_URL']);
    expect(parse(env)).toBe('redis://cache:6379');
  });

  it('cluster: REDIS_CLUSTER_NODES from the Secret, its first URL giving credentials and TLS', () => {
    const env = podEnv(['redis.topology=cluster'], suffix);
    expect(redisVars(env)).toEqual(['REDIS_CLUSTER_NODES']);
    expect(parse(env)).toEqual({
      kind: 'cluster',
      tls: true,
      username: 'cg',
      password: 'pw',
      nodes: [0, 1, 2].map((i) => ({ host: `node-${i}`, port: 6379 })),
    });
  });

  it('sentinel: REDIS_SENTINELS and its password from the Secret, the master from the values', () => {
    const env = podEnv(['redis.topology=sentinel', 'redis.sentinelMaster=cg-primary'], suffix);
    expect(redisVars(env).sort()).toEqual(['REDIS_SENTINELS', 'REDIS_SENTINEL_MASTER', 'REDIS_SENTINEL_PASSWORD']);
    expect(parse(env)).toEqual({
      kind: 'sentinel',
      tls: false,
      master: 'cg-primary',
      sentinelPassword: 'sentinel-secret',
      sentinels: [0, 1, 2].map((i) => ({ host: `sentinel-${i}`, port: 26379 })),
    });
  });
});

it("opens the Sentinels' port next to Redis's in both NetworkPolicies", () => {
  const set = ['networkPolicy.enabled=true', 'networkPolicy.egress.redis.extraPorts={26379}'];
  const policies = render({ set }).filter((o) => o.kind === 'NetworkPolicy' && !/-migrate/.test(o.metadata.name));
  expect(policies.length).toBeGreaterThanOrEqual(2);
  const egressPorts = (o: (typeof policies)[number]) =>
    ((o as unknown as { spec: { egress?: Array<{ ports?: Array<{ port: number }> }> } }).spec.egress ?? []).map((e) =>
      (e.ports ?? []).map((p) => p.port),
    );
  for (const p of policies.filter((o) => egressPorts(o).some((ports) => ports.includes(6379)))) {
    expect(egressPorts(p)).toContainEqual([6379, 26379]);
  }
  expect(policies.filter((o) => egressPorts(o).some((ports) => ports.includes(6379))).length).toBe(2);
});

it('refuses topology sentinel without the master name, and an unknown topology', () => {
  const sentinel = helm(['template', 'cg', CHART, '--set', 'redis.topology=sentinel']);
  expect(sentinel.status).not.toBe(0);
  expect(sentinel.stderr).toMatch(/\/redis\/sentinelMaster/);
  const unknown = helm(['template', 'cg', CHART, '--set', 'redis.topology=replicated']);
  expect(unknown.status).not.toBe(0);
  expect(unknown.stderr).toMatch(/\/redis\/topology/);
});
