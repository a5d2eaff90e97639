// The chart's escape hatches, each rendered by `helm template` and asserted on the manifest:
// extraEnv / extraEnvFrom / extraVolumes / extraVolumeMounts on every container, scheduling
// (affinity, tolerations, nodeSelector, priorityClassName, topology spread) and annotations/labels
// per component, the optional Ingresses and HTTPRoutes, and the migration NetworkPolicy ordered as
// a hook before the migration Job. Every object kubernetes-models knows validates offline.
import { resolveEnv } from '../../support/chart-processes';
import { CHART, find, helm, render, scratchValues, type K8sObject } from '../../support/helm';
import {
  deployment,
  job,
  onlyContainer,
  podSpec,
  selects,
  service,
  validateObject,
  type IDeployment,
  type IJob,
} from '../../support/k8s-models';

const scratch = scratchValues();
afterAll(scratch.remove);
const values = (yaml: string) => scratch.file(yaml);
const renderYaml = (yaml: string) => render({ values: [values(yaml)] });
const DEFAULTS = render();
const workloads = (objs: K8sObject[]): Array<IDeployment | IJob> => [
  deployment(objs, '-gateway'),
  deployment(objs, '-admin'),
  job(objs, '-migrate'),
];
const podLabelsOf = (w: IDeployment | IJob) => w.spec?.template.metadata?.labels;

const CA_VALUES = `
extraEnv:
  - { name: PGSSLROOTCERT, value: /etc/cg-ca/ca.crt }
  - { name: LOG_LEVEL, value: debug }
  - name: TEAM_TOKEN
    valueFrom: { secretKeyRef: { name: team-extra, key: token } }
extraEnvFrom:
  - secretRef: { name: team-extra }
    prefix: TEAM_
extraVolumes:
  - name: internal-ca
    secret: { secretName: internal-ca, items: [{ key: ca.crt, path: ca.crt }] }
extraVolumeMounts:
  - { name: internal-ca, mountPath: /etc/cg-ca, readOnly: true }
`;

describe('extraEnv, extraEnvFrom, extraVolumes, extraVolumeMounts', () => {
  const objs = renderYaml(CA_VALUES);

  it('reach the gateway, admin and migration containers, after the chart’s own entries', () => {
    for (const w of workloads(objs)) {
      validateObject(w as unknown as K8sObject);
      const c = onlyContainer(w);
      const names = (c.env ?? []).map((e) => e.name);
      expect(names.slice(-3)).toEqual(['PGSSLROOTCERT', 'LOG_LEVEL', 'TEAM_TOKEN']);
      expect(names).toContain('DATABASE_URL');
      expect(c.envFrom?.at(-1)).toEqual({ secretRef: { name: 'team-extra' }, prefix: 'TEAM_' });
      expect(c.volumeMounts?.map((m) => m.mountPath)).toEqual(['/tmp', '/etc/cg-ca']);
      expect(c.volumeMounts?.[1]).toMatchObject({ name: 'internal-ca', readOnly: true });
      const volume = podSpec(w).volumes?.find((v) => v.name === 'internal-ca');
      expect(volume?.secret).toEqual({ secretName: 'internal-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] });
    }
  });

  it('an extraEnv entry wins over the value the chart puts in its ConfigMap (env over envFrom)', () => {
    const secrets = {
      'context-guru-secrets': { DATABASE_URL: 'postgres://db/x', REDIS_URL: 'redis://r', ADMIN_TOKEN: 'a', CG_ENCRYPTION_KEY: 'k' },
      'team-extra': { token: 'from-the-secret', REGION: 'eu' },
    };
    const base = resolveEnv(onlyContainer(deployment(DEFAULTS, '-gateway')), DEFAULTS, secrets, {}, { 'metadata.name': 'p' });
    expect(base.env.LOG_LEVEL).toBe('info');
    const { env } = resolveEnv(onlyContainer(deployment(objs, '-gateway')), objs, secrets, {}, { 'metadata.name': 'p' });
    expect(env).toMatchObject({ LOG_LEVEL: 'debug', PGSSLROOTCERT: '/etc/cg-ca/ca.crt', TEAM_TOKEN: 'from-the-secret', TEAM_REGION: 'eu' });
  });

  it('nothing extra by default', () => {
    for (const w of workloads(DEFAULTS)) {
      expect(onlyContainer(w).volumeMounts?.map((m) => m.name)).toEqual(['tmp']);
      expect(podSpec(w).volumes?.map((v) => v.name)).toEqual(['tmp']);
    }
    expect(onlyContainer(job(DEFAULTS, '-migrate')).envFrom).toBeUndefined();
  });
});

describe('scheduling, annotations and labels per component', () => {
  const affinity = (pool: string) =>
    `{ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: pool, operator: In, values: [${pool}] }] }] } } }`;
  const component = (name: string, pool: string) => `
${name}:
  affinity: ${affinity(pool)}
  tolerations: [{ key: dedicated, operator: Equal, value: ${pool}, effect: NoSchedule }]
  nodeSelector: { kubernetes.io/arch: amd64 }
  priorityClassName: ${pool}-critical
  topologySpreadConstraints:
    - { maxSkew: 2, topologyKey: topology.kubernetes.io/region, whenUnsatisfiable: ScheduleAnyway }
  podAnnotations: { example.com/pod: ${name} }
  podLabels: { example.com/team: ${pool} }
`;
  const deploymentMeta = (name: string) => `
  deploymentAnnotations: { reloader.stakater.com/auto: "true" }
  deploymentLabels: { example.com/owner: ${name} }
`;
  const objs = renderYaml(
    component('gateway', 'llm') +
      deploymentMeta('gateway') +
      component('admin', 'ops') +
      deploymentMeta('admin') +
      component('migration', 'batch'),
  );
  const pools: Array<[string, IDeployment | IJob, string]> = [
    ['gateway', deployment(objs, '-gateway'), 'llm'],
    ['admin', deployment(objs, '-admin'), 'ops'],
    ['migration', job(objs, '-migrate'), 'batch'],
  ];

  it.each(pools)('%s pods get their own affinity, tolerations, nodeSelector and priorityClassName', (_name, w, pool) => {
    validateObject(w as unknown as K8sObject);
    const spec = podSpec(w);
    expect(
      spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values,
    ).toEqual([pool]);
    expect(spec.tolerations).toEqual([{ key: 'dedicated', operator: 'Equal', value: pool, effect: 'NoSchedule' }]);
    expect(spec.nodeSelector).toEqual({ 'kubernetes.io/arch': 'amd64' });
    expect(spec.priorityClassName).toBe(`${pool}-critical`);
  });

  it('a topology spread constraint without a labelSelector counts its own component’s pods; the gateway keeps its zone and node spread', () => {
    const all = workloads(objs);
    for (const [name, w] of pools) {
      const extra = podSpec(w).topologySpreadConstraints?.find((t) => t.topologyKey === 'topology.kubernetes.io/region');
      expect(extra?.maxSkew).toBe(2);
      const selected = all.filter((x) => selects(extra?.labelSelector?.matchLabels, podLabelsOf(x))).map((x) => x.metadata?.name);
      expect({ name, selected }).toEqual({ name, selected: [w.metadata?.name] });
    }
    expect(podSpec(deployment(objs, '-gateway')).topologySpreadConstraints?.map((t) => t.topologyKey)).toEqual([
      'topology.kubernetes.io/zone',
      'kubernetes.io/hostname',
      'topology.kubernetes.io/region',
    ]);
  });

  it('Deployment annotations (Reloader) and labels land on the Deployment; pod ones on the pods; selectors stay', () => {
    for (const [name, w, pool] of pools) {
      expect(w.spec?.template.metadata?.annotations?.['example.com/pod']).toBe(name);
      expect(podLabelsOf(w)?.['example.com/team']).toBe(pool);
      if (w.kind !== 'Deployment') continue;
      expect(w.metadata?.annotations).toEqual({ 'reloader.stakater.com/auto': 'true' });
      expect(w.metadata?.labels?.['example.com/owner']).toBe(name);
      expect((w as IDeployment).spec?.selector.matchLabels).toEqual(deployment(DEFAULTS, `-${name}`).spec?.selector.matchLabels);
    }
  });

  it('none of it by default', () => {
    for (const w of workloads(DEFAULTS)) {
      const spec = podSpec(w);
      expect([spec.affinity, spec.priorityClassName, spec.tolerations, spec.nodeSelector]).toEqual([
        undefined,
        undefined,
        undefined,
        undefined,
      ]);
      expect(w.metadata?.annotations?.['reloader.stakater.com/auto']).toBeUndefined();
    }
  });
});

const ROUTES = `
ingress:
  enabled: true
  className: nginx
  annotations: { nginx.ingress.kubernetes.io/proxy-buffering: "off" }
  hosts: [{ host: llm.example.com, paths: [{ path: /, pathType: Prefix }] }]
  tls: [{ secretName: llm-example-tls, hosts: [llm.example.com] }]
httpRoute:
  enabled: true
  parentRefs: [{ name: shared, namespace: gateway-system, sectionName: https }]
  hostnames: [llm.example.com]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /anthropic } }, { path: { type: PathPrefix, value: /openai } }]
      timeouts: { request: 0s }
admin:
  ingress:
    enabled: true
    hosts: [{ host: cg-admin.internal.example.com, paths: [{ path: /v1, pathType: Prefix }] }]
  httpRoute:
    enabled: true
    parentRefs: [{ name: internal }]
`;

describe('Ingress and HTTPRoute, for the gateway and the admin API', () => {
  const objs = renderYaml(ROUTES);
  const byKind = (o: K8sObject[], kind: string) => o.filter((x) => x.kind === kind).map((x) => x.metadata.name);

  it('are off by default', () => {
    expect(byKind(DEFAULTS, 'Ingress')).toEqual([]);
    expect(byKind(DEFAULTS, 'HTTPRoute')).toEqual([]);
  });

  it('each Ingress sends its hosts and paths to its own Service’s http port, with class, TLS and annotations', () => {
    for (const [component, host, path] of [
      ['gateway', 'llm.example.com', '/'],
      ['admin', 'cg-admin.internal.example.com', '/v1'],
    ] as const) {
      const ing = find(objs, 'Ingress', `-${component}`);
      validateObject(ing);
      const spec = ing.spec as {
        ingressClassName?: string;
        tls?: unknown;
        rules: Array<{
          host: string;
          http: { paths: Array<{ path: string; pathType: string; backend: { service: { name: string; port: { name: string } } } }> };
        }>;
      };
      expect(spec.rules.map((r) => r.host)).toEqual([host]);
      const p = spec.rules[0]!.http.paths[0]!;
      expect([p.path, p.pathType]).toEqual([path, 'Prefix']);
      const svc = service(objs, `-${component}`);
      expect(p.backend.service.name).toBe(svc.metadata?.name);
      expect(svc.spec?.ports?.map((x) => x.name)).toContain(p.backend.service.port.name);
      if (component === 'gateway') {
        expect(spec.ingressClassName).toBe('nginx');
        expect(spec.tls).toEqual([{ secretName: 'llm-example-tls', hosts: ['llm.example.com'] }]);
        expect(ing.metadata.annotations).toEqual({ 'nginx.ingress.kubernetes.io/proxy-buffering': 'off' });
      }
    }
  });

  it('each HTTPRoute attaches to its parents and sends every rule to its own Service’s port', () => {
    const gw = find(objs, 'HTTPRoute', '-gateway');
    expect(gw.apiVersion).toBe('gateway.networking.k8s.io/v1');
    const spec = gw.spec as {
      parentRefs: unknown;
      hostnames: string[];
      rules: Array<{ backendRefs: Array<{ name: string; port: number }>; matches: unknown[]; timeouts?: unknown }>;
    };
    expect(spec.parentRefs).toEqual([{ name: 'shared', namespace: 'gateway-system', sectionName: 'https' }]);
    expect(spec.hostnames).toEqual(['llm.example.com']);
    expect(spec.rules[0]!.matches).toHaveLength(2);
    expect(spec.rules[0]!.timeouts).toEqual({ request: '0s' });
    for (const component of ['gateway', 'admin']) {
      const route = find(objs, 'HTTPRoute', `-${component}`).spec as typeof spec;
      const svc = service(objs, `-${component}`);
      for (const r of route.rules) expect(r.backendRefs).toEqual([{ name: svc.metadata?.name, port: svc.spec?.ports?.[0]?.port }]);
    }
    expect((find(objs, 'HTTPRoute', '-admin').spec as typeof spec).rules[0]!.matches).toEqual([
      { path: { type: 'PathPrefix', value: '/' } },
    ]);
  });

  it('NOTES name the Ingress hosts and the HTTPRoute hostnames', () => {
    const r = helm(['install', 'cg', CHART, '--dry-run=client', '--namespace', 'llm', '-f', values(ROUTES)]);
    expect(r.status).toBe(0);
    const notes = r.stdout.slice(r.stdout.indexOf('NOTES:'));
    expect(notes).toMatch(/Ingress: +llm\.example\.com$/m);
    expect(notes).toMatch(/HTTPRoute: +llm\.example\.com$/m);
  });

  it('the admin ones go with the admin: none while admin.enabled is false', () => {
    const noAdmin = render({ values: [values(ROUTES)], set: ['admin.enabled=false'] });
    expect(byKind(noAdmin, 'Ingress')).toEqual(['cg-context-guru-gateway']);
    expect(byKind(noAdmin, 'HTTPRoute')).toEqual(['cg-context-guru-gateway']);
  });
});

describe('the migration NetworkPolicy in a default-deny namespace', () => {
  it('is a pre-install,pre-upgrade hook weighted before the migration Job, selecting its pods, reaching Postgres', () => {
    const objs = render({ set: ['networkPolicy.enabled=true', 'networkPolicy.egress.postgres.cidrs[0]=10.41.0.0/16'] });
    const np = find(objs, 'NetworkPolicy', '-migration');
    validateObject(np);
    const j = job(objs, '-migrate');
    const ann = np.metadata.annotations ?? {};
    expect(ann['helm.sh/hook']).toBe(j.metadata?.annotations?.['helm.sh/hook']);
    expect(Number(ann['helm.sh/hook-weight'])).toBeLessThan(Number(j.metadata?.annotations?.['helm.sh/hook-weight']));
    expect(ann['helm.sh/hook-delete-policy']).toBe('before-hook-creation'); // replaced on upgrade, kept while the Job runs
    const spec = np.spec as {
      podSelector: { matchLabels: Record<string, string> };
      egress: Array<{ ports: Array<{ port: number }>; to: unknown[] }>;
    };
    expect(selects(spec.podSelector.matchLabels, podLabelsOf(j))).toBe(true);
    expect(spec.egress.find((e) => e.ports.some((p) => p.port === 5432))?.to).toEqual([{ ipBlock: { cidr: '10.41.0.0/16' } }]);
    // The app pods' policies are ordinary objects: they are created after the hooks, with the pods.
    for (const c of ['gateway', 'admin']) expect(find(objs, 'NetworkPolicy', `-${c}`).metadata.annotations).toBeUndefined();
  });
});

describe('dashboards of two releases in one Grafana', () => {
  type Dash = { uid: string; title: string; templating: { list: Array<{ name: string; current?: unknown }> } };
  const dashboards = (o: { release?: string; namespace?: string; set?: string[] }) =>
    Object.values((find(render(o), 'ConfigMap', '-dashboards') as unknown as { data: Record<string, string> }).data).map(
      (j) => JSON.parse(j) as Dash,
    );

  it('get uids and titles of their own (from the release, or dashboards.uidPrefix), within Grafana’s 40 characters', () => {
    const a = dashboards({ release: 'cg', namespace: 'team-a' });
    const b = dashboards({ release: 'cg', namespace: 'team-b' });
    const c = dashboards({ release: 'other', namespace: 'team-a' });
    const uids = [a, b, c].map((d) => d.map((x) => x.uid));
    expect(new Set(uids.flat()).size).toBe(uids.flat().length);
    expect(new Set([a, b, c].flatMap((d) => d.map((x) => x.title))).size).toBe(uids.flat().length);
    for (const u of uids.flat()) expect(u.length).toBeLessThanOrEqual(40);
    expect(a.map((x) => x.title)).toContain('context-guru / Savings (team-a/cg)');
    // The same release renders the same uids every time (links and bookmarks survive upgrades).
    expect(dashboards({ release: 'cg', namespace: 'team-a' }).map((x) => x.uid)).toEqual(uids[0]);
    expect(dashboards({ set: ['dashboards.uidPrefix=prod-eu'] }).map((x) => x.uid)).toContain('prod-eu-savings');
  });

  it('default their namespace variable to the release namespace, and have a job variable', () => {
    for (const d of dashboards({ namespace: 'team-a' })) {
      const vars = Object.fromEntries(d.templating.list.map((v) => [v.name, v]));
      expect(vars.namespace?.current).toEqual({ text: 'team-a', value: ['team-a'] });
      expect(vars.job).toBeDefined();
    }
  });
});
