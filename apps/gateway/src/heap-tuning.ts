// V8's old-generation limit, fixed at twice the live heap after each full collection. V8 counts
// every ArrayBuffer byte allocated since the last mark-compact against that limit, and a proxy
// allocates one per socket read (a 60 KB body is 60 KB of it), while V8 sizes the room between
// collections from on-heap allocation alone; after an idle spell its memory reducer also shrinks
// that room to its minimum. A gateway with tens of MB of live heap then ran a full collection
// every ~200 requests of a burst (≈ 10 ms each): bursts after ≥ 8 s of quiet, which is how agent
// traffic arrives, cost twice the CPU per request of a steady stream (bench/README.md, issue 14).
// A fixed factor keeps the room proportional to the live heap whatever the allocation mix.
import { setFlagsFromString } from 'node:v8';

/** Heap growth per full collection, in percent of the live heap (V8: factor 1 + percent / 100). */
const HEAP_GROWING_PERCENT = 100;

/** Applies the gateway's heap sizing, unless node was started with its own --heap-growing-percent. */
export function tuneHeap(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some((a) => a.startsWith('--heap-growing-percent'))) return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
