// The CPUs this process may actually use. In a pod with a CPU limit the node's core count
// (availableParallelism) is not what the process gets: the kernel throttles it to the cgroup's
// quota, so a gate sized from 32 node cores would admit 64 compressions that a 2-CPU quota then
// runs 16× slower, each request waiting behind the others instead of being shed. The quota is
// read from cgroup v2 (`cpu.max`: "<quota> <period>" or "max <period>") or, failing that, v1
// (`cpu/cpu.cfs_quota_us`, -1 for none, and `cpu/cpu.cfs_period_us`); without one (no limit, not
// Linux, unreadable) the cores are the node's. A fractional quota rounds up: 1.5 CPUs can keep two
// compressions going, each at three quarters of a core.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

/** Where a container sees its own cgroup (cgroup namespaces put the pod's at the root). */
const CGROUP_ROOT = '/sys/fs/cgroup';
/** v1 mounts the cpu controller under one of these names (cpu,cpuacct on most distributions). */
const V1_CPU_DIRS = ['cpu', 'cpu,cpuacct', 'cpuacct,cpu'];

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** quota / period in CPUs, or undefined when either is missing, unlimited or not a positive number. */
function ratio(quota: string | undefined, period: string | undefined): number | undefined {
  const q = Number(quota);
  const p = Number(period);
  if (!Number.isFinite(q) || !Number.isFinite(p) || q <= 0 || p <= 0) return undefined;
  return q / p;
}

/**
 * The cgroup CPU quota in CPUs (may be fractional), or undefined when there is none.
 * @internal exported for tests
 */
export function cgroupCpuQuota(root = CGROUP_ROOT): number | undefined {
  const v2 = read(join(root, 'cpu.max'));
  if (v2 !== undefined) {
    const [quota, period] = v2.split(/\s+/);
    return quota === 'max' ? undefined : ratio(quota, period);
  }
  for (const dir of V1_CPU_DIRS) {
    const quota = read(join(root, dir, 'cpu.cfs_quota_us'));
    if (quota !== undefined) return ratio(quota, read(join(root, dir, 'cpu.cfs_period_us')));
  }
  return undefined;
}

/** Whole CPUs the process can use: the quota rounded up, never above the node's cores, at least 1. */
export function usableCores(root = CGROUP_ROOT, nodeCores = availableParallelism()): number {
  const quota = cgroupCpuQuota(root);
  const cores = quota === undefined ? nodeCores : Math.min(nodeCores, Math.ceil(quota));
  return Math.max(1, cores);
}
