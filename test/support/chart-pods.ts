// A rendered pod as a local process's env, shared by the chart-wiring tests: the container's env
// resolved (chart-processes), its port and HOST remapped for one shared host, the provider URLs
// pointed at a fake upstream, and its Secret and ConfigMap volumes laid out as the kubelet would
// project them — in a scratch folder, with every env value under a mountPath remapped to the file
// there. Each substitution is recorded in `mapping`, which the tests print.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream';
import { anthropicMessage, openAiCompletion } from './fake-upstream-json';
import { applyRemaps, resolveEnv, type Remap, type SecretData } from './chart-processes';
import type { K8sObject } from './helm';
import type { RuntimeStage } from './image-tree';
import { onlyContainer, podSpec, type IConfigMap, type IContainer, type IDeployment, type IJob } from './k8s-models';
import { freePort } from './replicas';

export interface ChartPodsOptions {
  objs: K8sObject[];
  secrets: SecretData;
  stage: RuntimeStage;
  /** The fake provider every upstream URL is remapped to. */
  upstreamUrl: string;
  /** Where projected volumes are written (one folder per pod label). */
  volumesDir: string;
}

export interface PodEnv {
  env: Record<string, string>;
  port?: number;
  chartKeys: string[];
}

/** What the downward API would give the pod `label` (its name is the release's prefix + label). */
export const podFields = (label: string) => ({ 'metadata.name': `cg-context-guru-${label}`, 'metadata.namespace': 'llm' });

/** The container's probe paths (startup, liveness, readiness), each required on the named port http. */
export function probes(c: IContainer): string[] {
  return [c.startupProbe, c.livenessProbe, c.readinessProbe].map((p) => {
    if (p?.httpGet?.port !== 'http') throw new Error(`${c.name}: probe on ${String(p?.httpGet?.port)}, expected the named port http`);
    return p.httpGet.path!;
  });
}

export function chartPods(o: ChartPodsOptions) {
  const mapping: string[] = [];
  const configMap = (name: string) => {
    const cm = o.objs.find((x) => x.kind === 'ConfigMap' && x.metadata.name === name) as IConfigMap | undefined;
    if (!cm) throw new Error(`a volume names ConfigMap ${name}, which the chart does not render`);
    return (cm.data ?? {}) as Record<string, string>;
  };

  /** The workload's Secret/ConfigMap volumes written under volumesDir/label; env values under their mountPaths remapped. */
  function projectVolumes(w: IDeployment | IJob, env: Record<string, string>, label: string): Remap[] {
    const c = onlyContainer(w);
    const remaps: Remap[] = [];
    for (const m of c.volumeMounts ?? []) {
      const v = podSpec(w).volumes?.find((x) => x.name === m.name);
      if (!v) throw new Error(`${c.name}: mount ${m.name} names no volume of the pod`);
      const source = v.secret ?? v.configMap;
      if (!source) continue; // an emptyDir (/tmp) is a writable folder that exists here too
      const name = v.secret ? v.secret.secretName! : v.configMap!.name!;
      const data = v.secret ? o.secrets[name] : configMap(name);
      if (!data) throw new Error(`${c.name}: volume ${m.name} names Secret ${name}, which the test does not provide`);
      const local = join(o.volumesDir, label, m.name);
      const items = source.items ?? Object.keys(data).map((key) => ({ key, path: key }));
      for (const { key, path } of items) {
        if (data[key] === undefined) throw new Error(`${c.name}: volume ${m.name} projects key ${key}, which ${name} lacks`);
        mkdirSync(dirname(join(local, path)), { recursive: true });
        writeFileSync(join(local, path), data[key]);
      }
      for (const [key, value] of Object.entries(env))
        if (value === m.mountPath || value.startsWith(`${m.mountPath}/`))
          remaps.push({ key, chart: value, local: local + value.slice(m.mountPath.length), why: `volume ${m.name} projected here` });
    }
    return remaps;
  }

  /** The pod's env with the local stand-ins listed; its port (env `portKey`) is remapped to a free one. */
  async function podEnv(w: IDeployment | IJob, portKey: string | undefined, label: string): Promise<PodEnv> {
    const c = onlyContainer(w);
    const { env, chartKeys } = resolveEnv(c, o.objs, o.secrets, o.stage.env, podFields(label));
    const remaps = projectVolumes(w, env, label);
    let port: number | undefined;
    if (portKey) {
      const containerPort = c.ports?.find((p) => p.name === 'http')?.containerPort;
      port = await freePort();
      remaps.push({ key: portKey, chart: String(containerPort), local: String(port), why: 'replicas share one host here' });
      remaps.push({ key: 'HOST', chart: '0.0.0.0', local: '127.0.0.1', why: 'tests listen on loopback only' });
    }
    if (env.OPENAI_UPSTREAM)
      remaps.push({ key: 'OPENAI_UPSTREAM', chart: 'https://api.openai.com', local: o.upstreamUrl, why: 'fake provider' });
    if (env.ANTHROPIC_UPSTREAM)
      remaps.push({ key: 'ANTHROPIC_UPSTREAM', chart: 'https://api.anthropic.com', local: o.upstreamUrl, why: 'fake provider' });
    for (const r of remaps) mapping.push(`${label}: ${r.key} ${r.chart} → ${r.local} (${r.why})`);
    return { env: { ...applyRemaps(env, remaps), PATH: process.env.PATH ?? '/usr/bin:/bin' }, port, chartKeys };
  }

  return { podEnv, mapping };
}

/** A tenant and its key, created through the admin API (the chart requires a tenant key). */
export async function issueTenantKey(adminBase: string, adminToken: string, tenant: string): Promise<string> {
  const asAdmin = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  const created = await fetch(`${adminBase}/v1/tenants`, {
    method: 'POST',
    headers: asAdmin,
    body: JSON.stringify({ id: tenant, name: tenant }),
  });
  if (created.status !== 201) throw new Error(`POST /v1/tenants answered ${created.status}: ${await created.text()}`);
  const issued = await fetch(`${adminBase}/v1/tenants/${tenant}/keys`, { method: 'POST', headers: asAdmin, body: '{}' });
  return ((await issued.json()) as { key: string }).key;
}

/** One OpenAI chat completion through a gateway replica, under the tenant key. */
export function openAiChat(base: string, tenantKey: string, content: string): Promise<Response> {
  return fetch(`${base}/openai/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', 'x-context-guru-key': tenantKey },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content }] }),
  });
}

/** The chart's default Secret (`context-guru-secrets`), its keys pointing at the stores given. */
export function appSecret(o: { databaseUrl: string; redisUrl: string; adminToken: string; opsToken: string }): Record<string, string> {
  return {
    DATABASE_URL: o.databaseUrl,
    REDIS_URL: o.redisUrl,
    ADMIN_TOKEN: o.adminToken,
    OPS_TOKEN: o.opsToken,
    CHEAP_MODEL_KEY: 'sk-ant-compaction-test',
    CG_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
}

/** `--set` values both wiring tests render with: their own Redis prefix, the safe preset, a cheap model. */
export const wiringSet = (prefix: string) => [
  `config.redisPrefix=${prefix}`,
  'config.preset=safe',
  'config.cheapModel.model=claude-haiku-4-5',
];

/** How many migrations the image holds: what a finished migration Job has applied. */
export const migrationCount = (app: string) => readdirSync(join(app, 'migrations')).filter((f) => f.endsWith('.sql')).length;

/** The fake provider of the wiring tests: every request is answered "served through the chart". */
export const startChartUpstream = (): Promise<FakeUpstream> =>
  startFakeUpstream((req) =>
    req.dialect === 'anthropic'
      ? { kind: 'json', body: anthropicMessage([{ type: 'text', text: 'served through the chart' }]) }
      : { kind: 'json', body: openAiCompletion('served through the chart') },
  );
