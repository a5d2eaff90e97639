// What one load window cost a process in garbage collection, per request served, from the two
// snapshots procs/gc-window-hook.cjs wrote around it.

interface Tally {
  n: number;
  ms: number;
}

export interface GcSnapshot {
  minor: Tally;
  major: Tally;
  other: Tally;
  oldUsed: number;
}

export interface GcWindow {
  scavenges: number;
  /** Scavenge pause per request, µs. */
  scavengeUs: number;
  majors: number;
  majorUs: number;
  /** Incremental marking steps and weak-callback passes (the hook's `other`). */
  otherPasses: number;
  /**
   * Old-space growth per request, KB: what scavenges promoted. Null when a major GC ran in the
   * window (it frees old garbage, so growth no longer measures promotion).
   */
  promotedKb: number | null;
}

export function gcWindow(before: GcSnapshot, after: GcSnapshot, requests: number): GcWindow {
  const per = (x: number) => x / Math.max(1, requests);
  const majors = after.major.n - before.major.n;
  return {
    scavenges: after.minor.n - before.minor.n,
    scavengeUs: per((after.minor.ms - before.minor.ms) * 1000),
    majors,
    majorUs: per((after.major.ms - before.major.ms) * 1000),
    otherPasses: after.other.n - before.other.n,
    promotedKb: majors > 0 ? null : per((after.oldUsed - before.oldUsed) / 1024),
  };
}

/** The last two snapshots of a hook's file (one per SIGUSR2). */
export function lastTwo(fileText: string): [GcSnapshot, GcSnapshot] {
  const lines = fileText.trim().split('\n');
  if (lines.length < 2) throw new Error(`expected two GC snapshots, found ${lines.length}`);
  return [JSON.parse(lines[lines.length - 2]!) as GcSnapshot, JSON.parse(lines[lines.length - 1]!) as GcSnapshot];
}
