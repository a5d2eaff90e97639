// values.schema.json is strict: a misspelt key, a wrong type, a value outside an enum or a missing
// secret reference fails both `helm lint` and `helm template`, with a message naming the key.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHART, helm, renderArgs, scratchValues } from '../../support/helm';

const scratch = scratchValues();
afterAll(scratch.remove);
const valuesFile = (yaml: string) => scratch.file(yaml);

const CASES: Array<[string, string, RegExp]> = [
  ['replicas instead of gateway.replicaCount', 'gateway:\n  replicas: 3\n', /\/gateway.*'replicas' not allowed/],
  ['replicaCount at the top level', 'replicaCount: 3\n', /additional properties 'replicaCount' not allowed/],
  ['a typo deep in autoscaling', 'gateway:\n  autoscaling:\n    maxReplica: 9\n', /\/gateway\/autoscaling.*'maxReplica' not allowed/],
  [
    'a typo in a store egress',
    'networkPolicy:\n  egress:\n    redis:\n      cidr: 10.0.0.0/8\n',
    /\/networkPolicy\/egress\/redis.*'cidr' not allowed/,
  ],
  ['a typo in resources', 'gateway:\n  resources:\n    limits:\n      memroy: 1Gi\n', /\/gateway\/resources\/limits.*'memroy' not allowed/],
  ['a secret in values (no such key)', 'secrets:\n  databaseUrl: postgres://u:p@db/app\n', /\/secrets.*'databaseUrl' not allowed/],
  ['an empty existingSecret', 'secrets:\n  existingSecret: ""\n', /\/secrets\/existingSecret/],
  ['a missing Secret key name', 'secrets:\n  keys:\n    redisUrl: null\n', /\/secrets\/keys.*redisUrl/],
  ['a preset that does not exist', 'config:\n  preset: balance\n', /\/config\/preset/],
  ['a log level outside the enum', 'config:\n  logLevel: verbose\n', /\/config\/logLevel/],
  ['a port as a string', 'gateway:\n  port: "4000"\n', /\/gateway\/port/],
  ['a port out of range', 'admin:\n  port: 70000\n', /\/admin\/port/],
  ['an upstream that is not http(s)', 'config:\n  openaiUpstream: ftp://example.com\n', /\/config\/openaiUpstream/],
  ['a boolean as a string', 'networkPolicy:\n  enabled: "yes"\n', /\/networkPolicy\/enabled/],
  ['a blocked CIDR that is not one', 'networkPolicy:\n  blockedCidrs: [metadata]\n', /\/networkPolicy\/blockedCidrs\/0/],
  ['a ServiceMonitor interval without a unit', 'serviceMonitor:\n  interval: 30\n', /\/serviceMonitor\/interval/],
  ['an extraEnv entry without a name', 'extraEnv:\n  - value: x\n', /\/extraEnv\/0.*name/],
  [
    'an extraEnv valueFrom typo',
    'extraEnv:\n  - name: A\n    valueFrom: { secretRef: { name: s, key: k } }\n',
    /\/extraEnv\/0\/valueFrom.*'secretRef' not allowed/,
  ],
  ['a volume source typo', 'extraVolumes:\n  - name: ca\n    secrets: { secretName: ca }\n', /\/extraVolumes\/0.*'secrets' not allowed/],
  ['a relative mount path', 'extraVolumeMounts:\n  - { name: ca, mountPath: etc/ca }\n', /\/extraVolumeMounts\/0\/mountPath/],
  ['an affinity typo', 'admin:\n  affinity: { nodeAfinity: {} }\n', /\/admin\/affinity.*'nodeAfinity' not allowed/],
  [
    'a spread constraint without a topologyKey',
    'migration:\n  topologySpreadConstraints: [{ maxSkew: 1, whenUnsatisfiable: DoNotSchedule }]\n',
    /\/migration\/topologySpreadConstraints\/0.*topologyKey/,
  ],
  ['an Ingress enabled without hosts', 'ingress:\n  enabled: true\n', /\/ingress\/hosts/],
  [
    'an Ingress path type that does not exist',
    'admin:\n  ingress:\n    enabled: true\n    hosts: [{ host: a.example.com, paths: [{ path: /, pathType: Prefixed }] }]\n',
    /\/admin\/ingress\/hosts\/0\/paths\/0\/pathType/,
  ],
  ['an HTTPRoute enabled without parentRefs', 'httpRoute:\n  enabled: true\n', /\/httpRoute\/parentRefs/],
  ['a dashboards uid prefix too long for Grafana', `dashboards:\n  uidPrefix: ${'x'.repeat(30)}\n`, /\/dashboards\/uidPrefix/],
];

describe('values.schema.json', () => {
  it('is strict at every level: every object in it forbids unknown keys', () => {
    const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8')) as Record<string, unknown>;
    const loose: string[] = [];
    const walk = (node: unknown, path: string) => {
      if (!node || typeof node !== 'object') return;
      const o = node as Record<string, unknown>;
      // A free-form map (labels, annotations) declares the type of its values instead.
      if (o.type === 'object' && o.properties && o.additionalProperties !== false) loose.push(path);
      for (const [k, v] of Object.entries(o)) walk(v, `${path}/${k}`);
    };
    walk(schema, '');
    expect(loose).toEqual([]);
  });

  it.each(CASES)('rejects %s in helm template and helm lint, naming the key', (_what, yaml, message) => {
    const f = valuesFile(yaml);
    const t = helm(renderArgs({ values: [f] }));
    expect(t.status).not.toBe(0);
    expect(t.stderr).toMatch(message);
    const l = helm(['lint', '--strict', CHART, '-f', f]);
    expect(l.status).not.toBe(0);
    expect(l.stdout + l.stderr).toMatch(message);
  });

  it('rejects an HPA whose minimum exceeds its maximum', () => {
    const t = helm(
      renderArgs({ values: [valuesFile('gateway:\n  autoscaling:\n    enabled: true\n    minReplicas: 5\n    maxReplicas: 2\n')] }),
    );
    expect(t.status).not.toBe(0);
    expect(t.stderr).toMatch(/minReplicas must not exceed/);
  });

  it('accepts the same keys spelt right', () => {
    const f = valuesFile('gateway:\n  replicaCount: 3\n  autoscaling:\n    maxReplicas: 9\nconfig:\n  preset: agent\n  logLevel: debug\n');
    expect(helm(renderArgs({ values: [f] })).status).toBe(0);
  });
});
