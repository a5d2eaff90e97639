// Added latency per request: the gateway's own work before forwarding (decode, session state,
// pipeline, stash, encode, and the bytes that go upstream as the route hands them to undici) on a
// generated ~1 MB / 200-message agent transcript, for presets off and agent, on the first (cold)
// turn of a session and on warm later turns, the body handed over as the chat route hands it (bytes,
// their text as the turn cache decoded it). In-process, memory store, no network: this is exactly
// the time the gateway adds to a request.
import { MemoryHotStore } from '@context-guru/storage';
import { tuneHeap, upstreamBytes, prepareRequest, createTenantRuntime } from '@context-guru/engine';
import { prepareDeps } from '../test/support/prepare-deps';
import { responsesTurn } from '../test/support/responses-fixtures';
import { agentSteps, openaiTurn, anthropicTurn, type AgentStep } from '../test/support/transcripts';
import { percentile, table } from './bench-util';

const TURNS = 100; // 100 tool exchanges → 202 messages (Responses: 302 items, a reasoning item per exchange)
const DIALECTS = ['openai', 'anthropic', 'responses'] as const;
const TURN_BODY = { openai: openaiTurn, anthropic: anthropicTurn, responses: responsesTurn };
const turnBytes = (dialect: (typeof DIALECTS)[number], steps: AgentStep[], t: number) =>
  Buffer.from(JSON.stringify(TURN_BODY[dialect](steps, t)));
const WARM_TURNS = Number(process.env.BENCH_WARM_TURNS ?? 20);
// A gateway that has served traffic, not one compiling its code: the warm-turn path is optimised
// by V8 only after a few hundred calls of its per-turn functions (--trace-opt still showed ~1
// compile per warm turn 60 turns in), so another session of the same size runs this many warm
// turns first. The cold and new-session figures are measured before it, in a fresh process state.
const JIT_WARMUP_TURNS = Number(process.env.BENCH_JIT_WARMUP_TURNS ?? 150);
// An idle spell before each warm turn, as an agent's turns come (0: back to back). With it, the
// heap V8's memory reducer shrank while idle shows in the figures unless node runs with the
// gateway's --no-memory-reducer (bench/README.md has both commands).
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 0);

export async function runOverhead(): Promise<string> {
  // The heap sized as the gateway's process entries size it (heap-tuning.ts).
  tuneHeap();
  const steps = agentSteps(TURNS + WARM_TURNS, 11);
  const jitSteps = agentSteps(TURNS + JIT_WARMUP_TURNS, 12);
  const rows: string[][] = [];
  for (const dialect of DIALECTS) {
    for (const preset of ['off', 'agent']) {
      const store = new MemoryHotStore({ ttlSeconds: 10_000, maxEntries: 100_000 });
      const tenant = createTenantRuntime('bench', { preset }, 1);
      const deps = prepareDeps(store);
      // Bodies arrive as bytes, exactly as the route gets them; decoding them is part of the cost.
      const body = (t: number) => turnBytes(dialect, steps, t);
      const run = async (bytes: Buffer, session: string) => {
        const t0 = performance.now();
        // As the chat route: bytes in, decoded to text unless the pipeline is empty (preset off) —
        // through the turn cache, which decodes only the bytes a previous turn did not share.
        const text = preset === 'off' ? undefined : deps.turns?.text(dialect, bytes, tenant.id);
        const raw = preset === 'off' ? '' : (text?.whole() ?? bytes.toString('utf8'));
        const prepared = await prepareRequest(deps, {
          route: dialect,
          dialect,
          raw,
          text,
          bytes,
          tenant,
          pipeline: tenant.built.pipeline,
          cacheMode: 'auto',
          sessionHeader: session,
          bypassHeader: false,
        });
        // Producing the upstream body is the gateway's cost too (a string would be encoded on the way out).
        upstreamBytes(prepared, raw, bytes);
        return performance.now() - t0;
      };
      const first = body(TURNS);
      // Cold: a session's first turn with nothing memoised in this process yet.
      const cold = await run(first, `cold-${preset}-${dialect}`);
      // A new session over already-seen content (memo warm, session state empty).
      const newSession = await run(first, `fresh-${preset}-${dialect}`);
      const other = (t: number) => turnBytes(dialect, jitSteps, t);
      for (let t = TURNS; t < TURNS + JIT_WARMUP_TURNS; t++) await run(other(t), `jit-${preset}-${dialect}`);
      // Warm: the first session one turn later, then each turn adding one tool exchange.
      const warm: number[] = [];
      for (let t = TURNS + 1; t <= TURNS + WARM_TURNS; t++) {
        if (IDLE_MS > 0) await new Promise((r) => setTimeout(r, IDLE_MS));
        warm.push(await run(body(t), `cold-${preset}-${dialect}`));
      }
      rows.push([
        dialect,
        preset,
        `${(first.length / 1e6).toFixed(2)} MB`,
        cold.toFixed(1),
        newSession.toFixed(1),
        percentile(warm, 50).toFixed(2),
        percentile(warm, 90).toFixed(2),
      ]);
      await store.close();
    }
  }
  return table(['dialect', 'preset', 'body', 'cold first turn ms', 'new session ms', 'warm p50 ms', 'warm p90 ms'], rows);
}
