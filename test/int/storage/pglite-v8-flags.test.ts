// Opening PGlite must not set V8 flags at runtime. Toggling --liftoff-only around its compile (to
// keep TurboFan's recompiled WASM out of the embedded process's RSS) left a long-running gateway
// collecting garbage far more often: after ~100,000 requests of the throughput load, 242 full
// (mark-compact) GCs, one every ~200 ms at a ~64 MB heap, and 317–463 µs of CPU per request, where
// the same tree without the toggle had 26 and 141–165 µs (bench notes: /work/wt/notes/longrun.md).
import v8 from 'node:v8';
import { PgliteSqlClient } from '@context-guru/storage';

test('opening the embedded database sets no V8 flag', async () => {
  const original = v8.setFlagsFromString;
  const set: string[] = [];
  v8.setFlagsFromString = (flags: string) => void set.push(flags);
  try {
    const db = await PgliteSqlClient.open();
    await db.close();
  } finally {
    v8.setFlagsFromString = original;
  }
  expect(set).toEqual([]);
}, 120_000);
