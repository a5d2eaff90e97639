// One session whose turns are shed and admitted in a seeded, irregular order — as a session
// running alongside a burst sees the gate — never changes a byte the provider has cached: every
// forwarded prefix (cache_control aside: breakpoint placement is not part of the cache key) is
// the previous turn's forwarded messages, exactly. Covers a shed turn after an admitted one (it
// replays the frozen decisions), an admitted turn after shed ones (it may not rewrite what they
// forwarded as received), runs of each, and the session's first turn shed, on both dialects, with
// the memory store and with the embedded durable tier (PGlite) behind it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { xorshift32 } from '../support/prng';
import { jsonScript } from '../support/scripted-model';
import { agentSteps, anthropicTurn, openaiTurn } from '../support/transcripts';

const TURNS = 30;
const canonical = (m: unknown) => JSON.stringify(m, (k, v: unknown) => (k === 'cache_control' ? undefined : v));

/** Shed (true) or admitted, per turn: seeded, with the first turn shed and runs of both. */
function schedule(seed: number): boolean[] {
  const rnd = xorshift32(seed);
  return Array.from({ length: TURNS }, (_, i) => i === 0 || rnd() < 0.5);
}

// `churned`: a hot store too small for the burst's sessions, as under load, so the session's own
// entries (its turn record, stash, unpinned decisions) are evicted between its turns.
const SMALL_HOT = 'preset: agent\nstore:\n  max_entries: 60\n';
const stores = [
  ['memory', {}, 0],
  ['pglite', { DURABLE_STORE: 'pglite' }, 0],
  ['pglite, churned', { DURABLE_STORE: 'pglite', CONFIG: SMALL_HOT }, 3],
] as const;

describe.each(stores)('a session alternating shed and admitted turns (%s store)', (_name, storeEnv, others) => {
  let upstream: FakeUpstream;
  let gateway: GatewayHarness;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'cg-alternating-'));
    upstream = await startFakeUpstream(jsonScript({ expand: false }));
    // The blanket tail gate: this test holds shed and admitted turns to a byte-stable prefix
    // (priced rewrites have their own tests: cache-priced, the replay gate).
    gateway = await startGateway(upstream.url, {
      PRESET: 'agent',
      COMPRESSION_SLOTS: '1',
      REWRITE_PAYBACK_TURNS: '0',
      DATA_DIR: dataDir,
      ...storeEnv,
    });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Sends turn `t`; with `shed`, the gate's one place is held meanwhile, so the request is shed. */
  async function post(path: string, body: unknown, session: string, shed: boolean): Promise<void> {
    const gate = gateway.gw.compression;
    const held = shed && gate.admit();
    if (shed) expect(held).toBe(true);
    try {
      const res = await fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-context-guru-session': session },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      await res.text();
    } finally {
      if (held) gate.leave(true);
    }
  }

  it.each([
    ['anthropic', '/anthropic/v1/messages', anthropicTurn, 3],
    ['openai', '/openai/v1/chat/completions', openaiTurn, 4],
  ] as const)('%s: every forwarded prefix is the previous turn, byte for byte', async (dialect, path, turnOf, seed) => {
    const steps = agentSteps(TURNS, seed);
    const plan = schedule(seed);
    const session = `alternating-${dialect}`;
    const sent: string[][] = [];
    const shedBefore = gateway.gw.compression.shed;
    let noise = 0;
    for (let t = 1; t <= TURNS; t++) {
      await post(path, turnOf(steps, t), session, plan[t - 1]!);
      sent.push((upstream.requests.at(-1)!.body.messages as unknown[]).map(canonical));
      // Other sessions' first turns in between, admitted and shed like a burst's.
      for (let o = 0; o < others; o++) await post(path, turnOf(steps, 1 + (o % 3)), `${session}-other-${noise++}`, o % 2 === 0);
    }
    expect(gateway.gw.compression.shed - shedBefore).toBe(plan.filter(Boolean).length + Math.ceil(others / 2) * TURNS);
    expect(sent).toHaveLength(TURNS);
    const busts: string[] = [];
    for (let i = 1; i < sent.length; i++) {
      const k = sent[i - 1]!.findIndex((m, j) => sent[i]![j] !== m);
      if (k >= 0) busts.push(`turn ${i + 1} (${plan[i] ? 'shed' : 'admitted'} after ${plan[i - 1] ? 'shed' : 'admitted'}) message ${k}`);
    }
    expect(busts).toEqual([]);
    // Compression did happen on the admitted turns: some forwarded message differs from the client's.
    const client = (turnOf(steps, TURNS).messages as unknown[]).map(canonical);
    expect(sent[TURNS - 1]!.some((m, j) => m !== client[j])).toBe(true);
  });
});
