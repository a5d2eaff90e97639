// The runtime image without a container engine: parse the Dockerfile's last stage and lay out the
// files it copies (from this built checkout: the build stage runs the same `npm ci && npm run
// build` in /app) in a scratch folder, with a node_modules of the production dependencies only,
// so the chart's commands can be run from exactly what the image would hold.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { ROOT } from './helm';

interface CopyLine {
  from?: string;
  sources: string[];
  dest: string;
}

export interface RuntimeStage {
  base: string;
  workdir: string;
  env: Record<string, string>;
  user?: string;
  cmd?: string[];
  copies: CopyLine[];
  stages: string[];
}

export function parseDockerfile(path = join(ROOT, 'Dockerfile')): RuntimeStage {
  const lines = readFileSync(path, 'utf8')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const stages: string[] = [];
  let cur: RuntimeStage | undefined;
  for (const line of lines) {
    const [op, ...rest] = line.split(/\s+/);
    const arg = rest.join(' ');
    switch (op!.toUpperCase()) {
      case 'FROM':
        stages.push(rest[2] ?? `stage${stages.length}`);
        cur = { base: rest[0]!, workdir: '/', env: {}, copies: [], stages };
        break;
      case 'WORKDIR':
        cur!.workdir = arg;
        break;
      case 'ENV':
        for (const m of arg.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g)) cur!.env[m[1]!] = m[2]!.replace(/^"|"$/g, '');
        break;
      case 'USER':
        cur!.user = arg;
        break;
      case 'CMD':
      case 'ENTRYPOINT':
        if (!arg.startsWith('[')) throw new Error(`Dockerfile ${op} must use the exec form (node as PID 1): ${line}`);
        cur!.cmd = JSON.parse(arg) as string[];
        break;
      case 'COPY': {
        const from = rest.find((r) => r.startsWith('--from='))?.slice(7);
        const paths = rest.filter((r) => !r.startsWith('--'));
        cur!.copies.push({ from, sources: paths.slice(0, -1), dest: paths[paths.length - 1]! });
        break;
      }
      default:
        break;
    }
  }
  if (!cur) throw new Error('Dockerfile has no stage');
  return cur;
}

/** Production packages at the top of node_modules, as `npm ci --omit=dev` would install them. */
function productionTopLevel(): string[] {
  // npm ls exits non-zero on an extraneous or missing package but still lists the tree.
  const out = spawnSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  }).stdout;
  if (!out) throw new Error('npm ls --omit=dev listed nothing: run npm ci');
  const nm = join(ROOT, 'node_modules') + '/';
  return out
    .split('\n')
    .filter((p) => p.startsWith(nm))
    .map((p) => p.slice(nm.length))
    .filter((p) => /^(@[^/]+\/)?[^/]+$/.test(p) && !p.startsWith('@context-guru/'));
}

/** Lays out the runtime stage's files under a scratch /app; returns its path. */
export function stageImageTree(stage: RuntimeStage = parseDockerfile()): string {
  const app = join(mkdtempSync(join(tmpdir(), 'cg-image-')), 'app');
  mkdirSync(app, { recursive: true });
  const inApp = (p: string) => join(app, relative(stage.workdir, join(stage.workdir, p)));
  for (const c of stage.copies) {
    for (const src of c.sources) {
      if (src.replace(/^\/app\//, '') === 'node_modules') {
        // The deps stage: production packages linked in, workspaces linked to the staged copies.
        const nm = inApp(c.dest);
        for (const p of productionTopLevel()) {
          mkdirSync(dirname(join(nm, p)), { recursive: true });
          symlinkSync(join(ROOT, 'node_modules', p), join(nm, p));
        }
        const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] };
        for (const ws of pkg.workspaces) {
          const name = (JSON.parse(readFileSync(join(ROOT, ws, 'package.json'), 'utf8')) as { name: string }).name;
          mkdirSync(dirname(join(nm, name)), { recursive: true });
          symlinkSync(join(app, ws), join(nm, name));
        }
        continue;
      }
      const from = join(ROOT, c.from ? src.replace(/^\/app\/?/, '') : src);
      cpSync(from, inApp(c.dest), { recursive: true });
    }
  }
  return app;
}
