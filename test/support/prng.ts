// The tests' seeded PRNGs, so property tests and generated transcripts never touch Math.random and
// the same seed always yields the same cases. mulberry32 is the one to use; xorshift32 stays only
// because the transcripts (test/support/transcripts.ts) were generated with it, and the suites and
// the benchmark figures recorded in bench/README were measured on those exact sessions.
export type Rng = () => number;

export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Marsaglia's xorshift32 (13, 17, 5); seed 0 would stick at 0, so it starts from 1. */
export function xorshift32(seed: number): Rng {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 0x100000000;
  };
}
