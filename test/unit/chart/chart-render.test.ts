// The chart as CI sees it: `helm lint --strict` and `helm template` over the default values and
// every ci/ values file; each rendered object validates offline, and the objects agree with each
// other (selectors, hook order, HPA target, hardening, grace period, no secret in the chart).
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { BlockList } from 'node:net';
import { basename, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { chartGatewayCommand } from '../../support/gateway-command';
import { CHART, CI_VALUES, chartCopy, find, helm, render, type K8sObject } from '../../support/helm';
import {
  configMaps,
  deployment,
  job,
  onlyContainer,
  podSpec,
  selects,
  service,
  validateObject,
  type IHorizontalPodAutoscaler,
  type IPodDisruptionBudget,
  type IServiceMonitor,
} from '../../support/k8s-models';

const SETS: Array<[string, string[]]> = [['default values', []], ...CI_VALUES.map((f): [string, string[]] => [basename(f), [f]])];
const rendered = new Map(SETS.map(([name, values]) => [name, render({ values })]));
const objs = (name: string): K8sObject[] => rendered.get(name)!;
const valuesOf = (files: string[]): Record<string, any> => {
  const merged: Record<string, any> = parseYaml(readFileSync(`${CHART}/values.yaml`, 'utf8'));
  const merge = (a: Record<string, any>, b: Record<string, any>) => {
    for (const [k, v] of Object.entries(b)) a[k] = v && typeof v === 'object' && !Array.isArray(v) && a[k] ? merge({ ...a[k] }, v) : v;
    return a;
  };
  return files.reduce((acc, f) => merge(acc, parseYaml(readFileSync(f, 'utf8')) ?? {}), merged);
};

describe.each(SETS)('chart with %s', (name, files) => {
  const all = () => objs(name);
  const values = valuesOf(files);
  const workloads = () => [
    deployment(all(), '-gateway'),
    ...(values.admin.enabled ? [deployment(all(), '-admin')] : []),
    job(all(), '-migrate'),
  ];

  it('passes helm lint --strict', () => {
    const r = helm(['lint', '--strict', CHART, ...files.flatMap((f) => ['-f', f])]);
    expect(r.stderr + r.stdout).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    expect(r.status).toBe(0);
  });

  it('renders only objects that validate against the Kubernetes schemas offline', () => {
    expect(all().length).toBeGreaterThan(5);
    for (const o of all()) expect(() => validateObject(o)).not.toThrow();
    const names = all().map((o) => `${o.kind}/${o.metadata.name}`);
    expect(new Set(names).size).toBe(names.length);
  });

  it('holds no secret: DATABASE_URL, REDIS_URL and ADMIN_TOKEN come from the existing Secret only', () => {
    expect(all().filter((o) => o.kind === 'Secret')).toEqual([]);
    for (const cm of configMaps(all()))
      for (const k of Object.keys(cm.data ?? {})) expect(['DATABASE_URL', 'REDIS_URL', 'ADMIN_TOKEN']).not.toContain(k);
    for (const w of workloads()) {
      for (const e of onlyContainer(w).env ?? []) {
        if (!['DATABASE_URL', 'REDIS_URL', 'ADMIN_TOKEN'].includes(e.name)) continue;
        expect(e.value).toBeUndefined();
        expect(e.valueFrom?.secretKeyRef?.name).toBe(values.secrets.existingSecret);
        expect(e.valueFrom?.secretKeyRef?.optional).not.toBe(true);
      }
    }
  });

  const podLabels = (w: { spec?: { template: { metadata?: { labels?: Record<string, string> } } } }) => w.spec?.template.metadata?.labels;
  /** The names of the workloads whose pods `sel` selects. */
  const selected = (sel: Record<string, string> | undefined) =>
    workloads()
      .filter((w) => selects(sel, podLabels(w)))
      .map((w) => w.metadata!.name!);

  it('Deployments and Services select their own pods, and only those', () => {
    for (const d of workloads().filter((w) => w.kind === 'Deployment')) {
      expect(selects((d as ReturnType<typeof deployment>).spec!.selector.matchLabels, podLabels(d))).toBe(true);
    }
    const components = values.admin.enabled ? ['gateway', 'admin'] : ['gateway'];
    for (const c of components) {
      const svc = service(all(), `-${c}`);
      expect(selected(svc.spec?.selector)).toEqual([`cg-context-guru-${c}`]);
      expect(svc.spec?.ports?.[0]?.targetPort).toBe('http');
      expect(onlyContainer(deployment(all(), `-${c}`)).ports?.map((p) => p.name)).toContain('http');
    }
  });

  it('the PDB, topology spread and NetworkPolicies select the pods they mean, and only those', () => {
    const pdb = all().find((o) => o.kind === 'PodDisruptionBudget') as unknown as IPodDisruptionBudget | undefined;
    if (values.gateway.pdb.enabled) expect(selected(pdb?.spec?.selector?.matchLabels)).toEqual(['cg-context-guru-gateway']);
    for (const t of podSpec(deployment(all(), '-gateway')).topologySpreadConstraints ?? [])
      expect(selected(t.labelSelector?.matchLabels)).toEqual(['cg-context-guru-gateway']);
    for (const np of all().filter((o) => o.kind === 'NetworkPolicy')) {
      const sel = (np.spec as { podSelector: { matchLabels: Record<string, string> } }).podSelector.matchLabels;
      const suffix = np.metadata.name.replace('cg-context-guru-', '');
      expect(selected(sel)).toEqual([suffix === 'migration' ? 'cg-context-guru-migrate' : `cg-context-guru-${suffix}`]);
    }
  });

  it('the ServiceMonitor (when rendered) scrapes the gateway Service only', () => {
    const sm = all().find((o) => o.kind === 'ServiceMonitor') as unknown as IServiceMonitor | undefined;
    if (!sm) return;
    expect(selects(sm.spec.selector.matchLabels, service(all(), '-gateway').metadata?.labels)).toBe(true);
    expect(selects(sm.spec.selector.matchLabels, values.admin.enabled ? service(all(), '-admin').metadata?.labels : {})).toBe(false);
    expect(sm.spec.endpoints?.map((e) => [e.port, e.path])).toEqual([['http', '/metrics']]);
    // /metrics names every tenant and answers only the ops token: the scrape sends the Secret's.
    expect(sm.spec.endpoints?.map((e) => [e.authorization?.type, e.authorization?.credentials])).toEqual([
      ['Bearer', { name: values.secrets.existingSecret, key: values.secrets.keys.opsToken }],
    ]);
  });

  it('the HPA (when enabled) owns the gateway replica count and scales down slowly', () => {
    const gw = deployment(all(), '-gateway');
    const hpa = all().find((o) => o.kind === 'HorizontalPodAutoscaler') as unknown as IHorizontalPodAutoscaler | undefined;
    if (!values.gateway.autoscaling.enabled) {
      expect(hpa).toBeUndefined();
      expect(gw.spec?.replicas).toBe(values.gateway.replicaCount);
      return;
    }
    expect(gw.spec?.replicas).toBeUndefined();
    expect(hpa!.apiVersion).toBe('autoscaling/v2');
    expect(hpa!.spec?.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: gw.metadata?.name });
    const down = hpa!.spec?.behavior?.scaleDown;
    expect(down?.stabilizationWindowSeconds).toBeGreaterThanOrEqual(300);
    expect(down?.policies?.every((p) => p.type === 'Pods' && p.value <= 2 && p.periodSeconds >= 60)).toBe(true);
  });

  it('runs the migration as a pre-install,pre-upgrade hook after what it needs, keeps a failed Job, retries little', () => {
    const j = job(all(), '-migrate');
    const ann = j.metadata!.annotations!;
    expect(ann['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(ann['helm.sh/hook-delete-policy']?.split(',')).not.toContain('hook-failed');
    expect(ann['helm.sh/hook-delete-policy']?.split(',')).toContain('before-hook-creation');
    expect(j.spec!.backoffLimit).toBeLessThanOrEqual(2);
    expect(j.spec!.template.spec!.restartPolicy).toBe('Never');
    // Everything the Job's pod names exists before it: the user's Secret, or a hook of lower weight.
    const weight = Number(ann['helm.sh/hook-weight'] ?? 0);
    const spec = podSpec(j);
    const needs: Array<[string, string]> = [['ServiceAccount', spec.serviceAccountName ?? 'default']];
    for (const e of onlyContainer(j).env ?? []) {
      if (e.valueFrom?.configMapKeyRef) needs.push(['ConfigMap', e.valueFrom.configMapKeyRef.name!]);
      if (e.valueFrom?.secretKeyRef) needs.push(['Secret', e.valueFrom.secretKeyRef.name!]);
    }
    for (const f of onlyContainer(j).envFrom ?? [])
      needs.push(f.configMapRef ? ['ConfigMap', f.configMapRef.name!] : ['Secret', f.secretRef!.name!]);
    for (const [kind, n] of needs) {
      if (kind === 'Secret') {
        expect(n).toBe(values.secrets.existingSecret);
        continue;
      }
      const dep = all().find((o) => o.kind === kind && o.metadata.name === n);
      expect(dep?.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
      expect(Number(dep?.metadata.annotations?.['helm.sh/hook-weight'])).toBeLessThan(weight);
    }
    expectOnlyMigrationHooks(all(), values.networkPolicy.enabled, weight);
  });

  it('hardens every pod: non-root, read-only root with a /tmp emptyDir, no capabilities, no API token, resources set', () => {
    for (const w of workloads()) {
      const spec = podSpec(w);
      const c = onlyContainer(w);
      expect(spec.securityContext?.runAsNonRoot).toBe(true);
      expect(spec.securityContext?.runAsUser).toBeGreaterThan(0);
      expect(spec.automountServiceAccountToken).toBe(false);
      expect(c.securityContext).toMatchObject({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      });
      const tmp = c.volumeMounts?.find((m) => m.mountPath === '/tmp');
      expect(spec.volumes?.find((v) => v.name === tmp?.name)?.emptyDir).toBeDefined();
      expect(c.resources?.requests?.memory).toBeDefined();
      expect(c.resources?.limits?.memory).toBeDefined();
    }
  });

  it('probes /healthz and /readyz on the named port, and outlasts the longest stream on shutdown', () => {
    const gw = deployment(all(), '-gateway');
    const c = onlyContainer(gw);
    expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(c.lifecycle?.preStop?.exec?.command).toEqual(['sleep', String(values.gateway.preStopSleepSeconds)]);
    expect(podSpec(gw).terminationGracePeriodSeconds).toBeGreaterThan(
      values.gateway.preStopSleepSeconds + values.gateway.longestStreamSeconds,
    );
  });

  it('runs the gateway as the benches start it: node, its flags, the entry (the benches read the template)', () => {
    const { nodeArgs, entry } = chartGatewayCommand();
    expect(onlyContainer(deployment(all(), '-gateway')).command).toEqual(['node', ...nodeArgs, entry]);
  });

  it('NetworkPolicies (when enabled) name every egress destination and cut the metadata addresses out of every range', () => {
    const nps = all().filter((o) => o.kind === 'NetworkPolicy');
    if (!values.networkPolicy.enabled) return expect(nps).toEqual([]);
    const blocked: string[] = values.networkPolicy.blockedCidrs;
    expect(blocked).toContain('169.254.169.254/32');
    for (const np of nps) {
      const spec = np.spec as { policyTypes: string[]; egress: Array<{ to?: Array<{ ipBlock?: { cidr: string; except?: string[] } }> }> };
      expect(spec.policyTypes).toEqual(['Ingress', 'Egress']);
      for (const rule of spec.egress) {
        expect(rule.to?.length).toBeGreaterThan(0);
        for (const peer of rule.to!)
          if (peer.ipBlock) for (const b of blocked) if (cidrContains(peer.ipBlock.cidr, b)) expect(peer.ipBlock.except).toContain(b);
      }
    }
    const adminNp = nps.find((o) => o.metadata.name.endsWith('-admin'));
    if (adminNp) {
      const from = (
        adminNp.spec as { ingress: Array<{ from: Array<{ namespaceSelector: { matchExpressions: Array<{ values: string[] }> } }> }> }
      ).ingress;
      expect(from).toHaveLength(1);
      expect(from[0]!.from[0]!.namespaceSelector.matchExpressions[0]!.values.sort()).toEqual(
        ['llm', ...values.networkPolicy.adminAllowedNamespaces].sort(),
      );
    }
  });
});

/**
 * Nothing is a hook but what the migration Job needs first — its ServiceAccount and, with
 * NetworkPolicies on, its NetworkPolicy (a default-deny namespace would block the Job without it),
 * each weighted before it: app objects are created after the Job succeeded.
 */
function expectOnlyMigrationHooks(objs: K8sObject[], networkPolicies: boolean, jobWeight: number): void {
  const hooks = objs.filter((o) => o.metadata.annotations?.['helm.sh/hook']);
  expect(hooks.map((o) => o.kind).sort()).toEqual(networkPolicies ? ['Job', 'NetworkPolicy', 'ServiceAccount'] : ['Job', 'ServiceAccount']);
  for (const h of hooks.filter((o) => o.kind !== 'Job'))
    expect(Number(h.metadata.annotations?.['helm.sh/hook-weight'])).toBeLessThan(jobWeight);
}

/** Whether the first address of `inner` lies inside `outer` (IPv4 and IPv6, via node's BlockList). */
function cidrContains(outer: string, inner: string): boolean {
  const [net, bits] = outer.split('/');
  const family = net!.includes(':') ? 'ipv6' : 'ipv4';
  const addr = inner.split('/')[0]!;
  if (addr.includes(':') !== (family === 'ipv6')) return false;
  const list = new BlockList();
  list.addSubnet(net!, Number(bits), family);
  return list.check(addr, family);
}

describe('chart objects that follow from values', () => {
  it('a bootstrap config change changes the pods checksum (rolls them); an unrelated value does not', () => {
    const sum = (set: string[]) => deployment(render({ set }), '-gateway').spec!.template.metadata!.annotations!['checksum/config'];
    const base = sum([]);
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    expect(sum(['config.preset=agent'])).not.toBe(base);
    expect(sum(['config.logLevel=debug'])).not.toBe(base);
    expect(sum(['gateway.replicaCount=5'])).toBe(base);
  });

  it('packs every dashboards/*.json into one ConfigMap labelled grafana_dashboard: "1" (none when there are none or disabled)', () => {
    const chart = chartCopy();
    try {
      rmSync(`${chart}/dashboards`, { recursive: true, force: true });
      expect(render({ chart }).filter((o) => o.metadata.name.endsWith('-dashboards'))).toEqual([]);
      mkdirSync(`${chart}/dashboards`);
      const a = JSON.stringify({ title: 'Savings', panels: [{ expr: 'sum(rate(cg_requests_total[5m]))' }] }, null, 2);
      writeFileSync(`${chart}/dashboards/savings.json`, a);
      writeFileSync(`${chart}/dashboards/health.json`, '{"title":"Gateway health"}\n');
      writeFileSync(`${chart}/dashboards/notes.txt`, 'not a dashboard');
      const cm = find(render({ chart }), 'ConfigMap', '-dashboards') as unknown as {
        metadata: { labels: Record<string, string> };
        data: Record<string, string>;
      };
      expect(cm.metadata.labels.grafana_dashboard).toBe('1');
      expect(Object.keys(cm.data).sort()).toEqual(['health.json', 'savings.json']);
      // As written, but for the uid and title of this release (two releases must not collide).
      expect(JSON.parse(cm.data['savings.json']!)).toEqual({
        ...JSON.parse(a),
        uid: expect.stringMatching(/-savings$/),
        title: 'Savings (llm/cg)',
      });
      expect(render({ chart, set: ['dashboards.enabled=false'] }).filter((o) => o.metadata.name.endsWith('-dashboards'))).toEqual([]);
    } finally {
      rmSync(join(chart, '..'), { recursive: true, force: true }); // the scratch folder chartCopy made
    }
    // The real dashboards (written by the observability work) are all shipped as they are.
    const dir = `${CHART}/dashboards`;
    const real = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')) : [];
    const shipped = render().find((o) => o.metadata.name.endsWith('-dashboards')) as unknown as
      { data: Record<string, string> } | undefined;
    expect(Object.keys(shipped?.data ?? {}).sort()).toEqual(real.sort());
  });

  it('NOTES tell how to reach the gateway and the admin API and where the admin token comes from', () => {
    const r = helm(['install', 'cg', CHART, '--dry-run=client', '--namespace', 'llm', '-f', CI_VALUES[0]!]);
    expect(r.status).toBe(0);
    const notes = r.stdout.slice(r.stdout.indexOf('NOTES:'));
    expect(notes).toContain('port-forward svc/cg-context-guru-gateway');
    expect(notes).toContain('port-forward svc/cg-context-guru-admin');
    expect(notes).toContain('get secret context-guru-env');
    expect(notes).toContain('ADMIN_TOKEN');
  });
});
