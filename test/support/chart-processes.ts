// What a rendered pod would run, turned into a local process: the container's command with the
// image's ENV plus the container's env resolved from the rendered ConfigMaps and a test Secret.
// Anything that cannot be resolved throws; local substitutions are explicit (Remap) and recorded.
import { spawn, type ChildProcess } from 'node:child_process';
import type { K8sObject } from './helm';
import type { IConfigMap, IContainer } from './k8s-models';

export type SecretData = Record<string, Record<string, string>>;

export interface ResolvedEnv {
  /** Everything the process gets: image ENV, then the container's env (later wins, as in a pod). */
  env: Record<string, string>;
  /** Only what the chart sets (env + envFrom), for the read/unread check. */
  chartKeys: string[];
}

/** The downward API fields a pod would see (metadata.name, …), for env from fieldRef. */
export type PodFields = Record<string, string>;

export function resolveEnv(
  c: IContainer,
  objs: K8sObject[],
  secrets: SecretData,
  imageEnv: Record<string, string>,
  fields: PodFields = {},
): ResolvedEnv {
  const cms = new Map(
    objs
      .filter((o) => o.kind === 'ConfigMap')
      .map((o) => [o.metadata.name, ((o as unknown as IConfigMap).data ?? {}) as Record<string, string>]),
  );
  const cm = (name: string) => {
    const d = cms.get(name);
    if (!d) throw new Error(`container ${c.name} names ConfigMap ${name}, which the chart does not render`);
    return d;
  };
  const secret = (name: string) => {
    const d = secrets[name];
    if (!d) throw new Error(`container ${c.name} names Secret ${name}, which the test does not provide`);
    return d;
  };
  const env: Record<string, string> = { ...imageEnv };
  const chartKeys: string[] = [];
  for (const f of c.envFrom ?? []) {
    const data = f.configMapRef ? cm(f.configMapRef.name!) : secret(f.secretRef!.name!);
    for (const [k, v] of Object.entries(data)) {
      env[(f.prefix ?? '') + k] = v;
      chartKeys.push((f.prefix ?? '') + k);
    }
  }
  for (const e of c.env ?? []) {
    const v = envValue(c, e, cm, secret, fields);
    if (v === undefined) continue; // an optional key that is absent: as the kubelet does, the variable is too
    env[e.name] = v;
    chartKeys.push(e.name);
  }
  return { env, chartKeys };
}

type EnvVar = NonNullable<IContainer['env']>[number];

/** One env entry's value as the kubelet resolves it; undefined only for an optional key that is absent. */
function envValue(
  c: IContainer,
  e: EnvVar,
  cm: (name: string) => Record<string, string>,
  secret: (name: string) => Record<string, string>,
  fields: PodFields,
): string | undefined {
  if (e.value !== undefined) return e.value;
  const from = e.valueFrom;
  let v: string | undefined;
  if (from?.configMapKeyRef) v = cm(from.configMapKeyRef.name!)[from.configMapKeyRef.key];
  else if (from?.secretKeyRef) v = secret(from.secretKeyRef.name!)[from.secretKeyRef.key];
  else if (from?.fieldRef) v = fields[from.fieldRef.fieldPath];
  else throw new Error(`container ${c.name}: env ${e.name} has a source the test cannot resolve`);
  const optional = from.secretKeyRef?.optional ?? from.configMapKeyRef?.optional;
  if (v === undefined && !optional) throw new Error(`container ${c.name}: env ${e.name} points at a key that does not exist`);
  return v;
}

/** Keys `parse` reads when handed `env`: every property access is recorded, so nothing is listed by hand. */
export function keysRead<T>(
  parse: (src: Record<string, string | undefined>) => T,
  env: Record<string, string>,
): { read: Set<string>; parsed: T } {
  const read = new Set<string>();
  const src = new Proxy(env as Record<string, string | undefined>, {
    get(target, key) {
      if (typeof key === 'string') read.add(key);
      return target[key as string];
    },
  });
  return { read, parsed: parse(src) };
}

/** A local stand-in for a value the cluster would give differently; listed in the test output. */
export interface Remap {
  key: string;
  chart: string;
  local: string;
  why: string;
}

export function applyRemaps(env: Record<string, string>, remaps: Remap[]): Record<string, string> {
  const out = { ...env };
  for (const r of remaps) {
    if (out[r.key] !== r.chart)
      throw new Error(`remap ${r.key}: the chart sets ${JSON.stringify(out[r.key])}, the test expected ${JSON.stringify(r.chart)}`);
    out[r.key] = r.local;
  }
  return out;
}

export interface Proc {
  name: string;
  proc: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs a container command: `node` is this test's node binary (the image's is the same major). */
export function runCommand(name: string, command: string[], env: Record<string, string>, cwd: string): Proc {
  const [bin, ...args] = command;
  if (bin !== 'node') throw new Error(`${name}: expected the container to run node, got ${bin}`);
  const proc = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (c: Buffer) => (out = (out + c.toString()).slice(-40_000));
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    name,
    proc,
    output: () => out,
    exited,
    stop: () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      return exited;
    },
  };
}

/** Polls `url` until it answers `status`, failing fast when the process exits. */
export async function waitFor(p: Proc, url: string, status: number, timeoutMs = 45_000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (p.proc.exitCode !== null) throw new Error(`${p.name} exited with ${p.proc.exitCode} while waiting for ${url}:\n${p.output()}`);
    try {
      const res = await fetch(url);
      if (res.status === status) return res;
      last = `${res.status} ${await res.text()}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`${p.name}: ${url} did not answer ${status} (last: ${last})\n${p.output()}`);
}
