// `npm start` and the image's default CMD run the same embedded process with the same node flags,
// and those flags keep PGlite's WASM on V8's baseline compiler: TurboFan's recompiles of it left
// ≈ 60 MB of compiler-thread malloc arenas resident in the laptop default (bench/README.md, memory).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../support/helm';
import { parseDockerfile } from '../../support/image-tree';
import { chartGatewayCommand } from '../../support/gateway-command';
import { npmStartCommand } from '../../support/start-command';

describe('the embedded start command', () => {
  const start = npmStartCommand();

  it('runs the embedded entry with WASM kept off TurboFan', () => {
    expect(start.entry).toBe('apps/embedded/dist/main.js');
    expect(existsSync(join(ROOT, 'apps', 'embedded', 'src', 'main.ts'))).toBe(true);
    expect(start.nodeArgs).toContain('--liftoff-only');
  });

  it('keeps the heap it grew through idle spells, as the chart runs the gateway', () => {
    expect(start.nodeArgs).toContain('--no-memory-reducer');
    expect(chartGatewayCommand().nodeArgs).toEqual(['--no-memory-reducer']);
    // `npm run start:gateway` is the chart's gateway command, flag for flag.
    expect(npmStartCommand(undefined, 'start:gateway')).toEqual(chartGatewayCommand());
  });

  it('is the image default CMD, flag for flag', () => {
    expect(parseDockerfile().cmd).toEqual(['node', ...start.nodeArgs, start.entry]);
  });

  it('has flags this node accepts, and so has the chart gateway command (an unknown V8 flag would stop the process at once)', () => {
    const flags = [...start.nodeArgs, ...chartGatewayCommand().nodeArgs];
    const r = spawnSync(process.execPath, [...flags, '-e', 'process.stdout.write("ran")'], { encoding: 'utf8' });
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ status: 0, stdout: 'ran', stderr: '' });
  });

  it('refuses a start script that is not `node [flags] <entry>`', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cg-start-'));
    try {
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ scripts: { start: 'tsx apps/embedded/src/main.ts' } }));
      expect(() => npmStartCommand(dir)).toThrow(/must run `node \[flags\] <entry>`/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
