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

/**
 * V8 drops the bytecode of a function that has not run for a few full collections and compiles it
 * again on its next call. A gateway idle between an agent's turns loses the bytecode of its
 * request path that way and pays for it on the next burst: with 4 s of idle before every 3 s of
 * load, preset off cost 504 µs per request (bare 415) and 481 µs with flushing off; in the
 * throughput bench's full rotation at 1 connection off cost 583–737 µs per request with flushing
 * and 474–563 without (bench/README.md, issue 14). Keeping it costs memory, 6–17 MB at the
 * memory bench's peak in the embedded process, so `npm start` (the laptop default, held to its
 * RSS bound) leaves V8's flushing on.
 */
const KEEP_BYTECODE = '--no-flush-bytecode';

/** Whether node was started with its own setting of `flag` (`--flag`, `--no-flag`, `--flag=…`, dashes or underscores). */
function given(execArgv: readonly string[], flag: string): boolean {
  return execArgv.some((a) => {
    const name = a.replace(/_/g, '-').split('=')[0];
    return name === `--${flag}` || name === `--no-${flag}`;
  });
}

/**
 * Applies the gateway's heap settings, each unless node was started with its own (`execArgv`):
 * `keepBytecode` (default true) keeps the bytecode of functions idle for a while (KEEP_BYTECODE).
 */
export function tuneHeap({
  keepBytecode = true,
  execArgv = process.execArgv,
}: { keepBytecode?: boolean; execArgv?: readonly string[] } = {}): void {
  if (!given(execArgv, 'heap-growing-percent')) setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  if (keepBytecode && !given(execArgv, 'flush-bytecode')) setFlagsFromString(KEEP_BYTECODE);
}
