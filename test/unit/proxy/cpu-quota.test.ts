// The compression gate is sized from the CPUs the pod may use: cgroup v2 `cpu.max`, else v1's
// cfs quota and period, else the node's cores. Fixture cgroup trees stand in for /sys/fs/cgroup.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompressionGate } from '../../../apps/gateway/src/http/compression-gate';
import { cgroupCpuQuota, usableCores } from '../../../apps/gateway/src/http/cpu-quota';

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

/** A cgroup root holding `files` (path relative to the root → content). */
function cgroup(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'cg-cgroup-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), `${text}\n`);
  }
  return root;
}

const idleLoad = { connections: 0, saturated: () => false, watch: <S>(s: S) => s, close: () => undefined };

describe('usable CPUs from the cgroup', () => {
  it('cgroup v2 cpu.max: quota / period, rounded up, capped at the node cores', () => {
    expect(cgroupCpuQuota(cgroup({ 'cpu.max': '200000 100000' }))).toBe(2);
    expect(cgroupCpuQuota(cgroup({ 'cpu.max': '50000 100000' }))).toBe(0.5);
    expect(usableCores(cgroup({ 'cpu.max': '200000 100000' }), 32)).toBe(2);
    expect(usableCores(cgroup({ 'cpu.max': '150000 100000' }), 32)).toBe(2);
    expect(usableCores(cgroup({ 'cpu.max': '50000 100000' }), 32)).toBe(1);
    expect(usableCores(cgroup({ 'cpu.max': '800000 100000' }), 4)).toBe(4);
  });

  it('cgroup v2 without a limit ("max") falls back to the node cores', () => {
    const root = cgroup({ 'cpu.max': 'max 100000' });
    expect(cgroupCpuQuota(root)).toBeUndefined();
    expect(usableCores(root, 12)).toBe(12);
  });

  it('cgroup v1: cfs_quota_us / cfs_period_us under cpu or cpu,cpuacct; -1 is no limit', () => {
    expect(usableCores(cgroup({ 'cpu/cpu.cfs_quota_us': '300000', 'cpu/cpu.cfs_period_us': '100000' }), 16)).toBe(3);
    expect(usableCores(cgroup({ 'cpu,cpuacct/cpu.cfs_quota_us': '100000', 'cpu,cpuacct/cpu.cfs_period_us': '100000' }), 16)).toBe(1);
    expect(usableCores(cgroup({ 'cpu/cpu.cfs_quota_us': '-1', 'cpu/cpu.cfs_period_us': '100000' }), 16)).toBe(16);
  });

  it('no cgroup files, or garbage in them: the node cores', () => {
    expect(usableCores(join(tmpdir(), 'cg-no-such-cgroup'), 6)).toBe(6);
    expect(usableCores(cgroup({ 'cpu.max': 'lots 100000' }), 6)).toBe(6);
    expect(usableCores(cgroup({ 'cpu.max': '0 100000' }), 6)).toBe(6);
  });

  it('the compression gate takes 2 admissions and 1 running place per usable CPU; explicit sizes win', () => {
    const cores = usableCores(cgroup({ 'cpu.max': '200000 100000' }), 32);
    const gate = new CompressionGate(undefined, undefined, idleLoad, cores);
    expect([gate.limit, gate.running]).toEqual([4, 2]);
    const tiny = new CompressionGate(undefined, undefined, idleLoad, usableCores(cgroup({ 'cpu.max': '50000 100000' }), 32));
    expect([tiny.limit, tiny.running]).toEqual([2, 1]);
    expect([new CompressionGate(9, 3, idleLoad, 2).limit, new CompressionGate(9, 3, idleLoad, 2).running]).toEqual([9, 3]);
  });
});
