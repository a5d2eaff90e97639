// A 60-turn agent session replayed turn by turn through the gateway against a fake provider that
// bills like a prompt cache. The client re-sends originals every turn; the gateway must never
// change a message it already sent (no cache bust), may add markers only in the uncached tail on
// warm turns and anywhere on a provably cold turn, replays cold decisions byte-identically later,
// and re-derives the same bytes when its store lost the frozen decisions.
import type { Dialect, HotStore, SessionSnapshot, SessionWrites, StashEntry, StoreHealth, TurnRecord } from '@context-guru/components';
import { MemoryHotStore } from '@context-guru/storage';
import { RawIndex } from '../../libs/engine/src/wire/raw-index';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import {
  PromptCacheSim,
  cachingScript,
  canonical,
  headChanged,
  prefixBust,
  promptSegments,
  type Bill,
  type BilledRequest,
} from '../support/prompt-cache';
import { jsonScript } from '../support/scripted-model';
import { agentSteps, anthropicTurn, openaiTurn } from '../support/transcripts';

const CONFIG = [
  'pipeline: [format, dedup, collapse, failed_run, mask, cacheinject]',
  'components:',
  '  mask: { keep_recent: 3, cold_cache: true }',
  '  collapse: { cold_cache: true }',
  '  failed_run: { cold_cache: true }',
].join('\n');
const TURNS = 60;
const COLD_TURN = 36;
const LOSS_TURN = 48;
const STEP_MS = 20_000;
// Idle past the TTL the gateway assumes (+60 s): Anthropic 5 min, OpenAI 1 h.
const GAP_MS = { anthropic: 10 * 60_000, openai: 70 * 60_000 };
const MARKER = /<<cg:[A-Za-z0-9_-]{1,64}>>/;

/** The memory store, plus a switch that loses a session's frozen decisions as an eviction would. */
class LossyStore implements HotStore {
  readonly kind = 'lossy-memory';
  readonly persistent = true;
  private readonly written = new Map<string, Set<string>>();
  private readonly lost = new Map<string, Set<string>>();
  private dropped = 0;
  private repaired = 0;
  constructor(private readonly inner: MemoryHotStore) {}

  loseFrozen(session: string): number {
    const slots = this.written.get(session) ?? new Set<string>();
    this.lost.set(session, new Set([...(this.lost.get(session) ?? []), ...slots]));
    this.written.delete(session);
    this.dropped += slots.size;
    return slots.size;
  }
  async loadSession(tenant: string, session: string, keys: readonly string[]): Promise<SessionSnapshot> {
    const snap = await this.inner.loadSession(tenant, session, keys);
    const wanted = new Set(keys);
    for (const slot of this.lost.get(session) ?? []) {
      snap.frozen.delete(slot);
      if (wanted.has(slot.slice(slot.indexOf(':') + 1))) snap.lost.add(slot);
    }
    return snap;
  }
  async commitSession(tenant: string, session: string, writes: SessionWrites): Promise<void> {
    const lost = this.lost.get(session);
    let mine = this.written.get(session);
    if (!mine) this.written.set(session, (mine = new Set()));
    for (const slot of writes.frozen.keys()) {
      mine.add(slot);
      if (lost?.delete(slot)) this.repaired++;
    }
    return this.inner.commitSession(tenant, session, writes);
  }
  health(): StoreHealth {
    const h = this.inner.health();
    return { frozenDropped: h.frozenDropped + this.dropped, frozenRepaired: h.frozenRepaired + this.repaired };
  }
  putStash = (t: string, s: string, e: readonly StashEntry[]) => this.inner.putStash(t, s, e);
  getStash = (t: string, id: string) => this.inner.getStash(t, id);
  owns = (t: string, s: string, id: string) => this.inner.owns(t, s, id);
  markKept = (t: string, keys: readonly string[]) => this.inner.markKept(t, keys);
  advanceTurn = (t: string, s: string, turn: TurnRecord) => this.inner.advanceTurn(t, s, turn);
  recordRewrites = (t: string, s: string, rewritten: readonly number[]) => this.inner.recordRewrites(t, s, rewritten);
  ping = () => this.inner.ping();
  close = () => this.inner.close();
}

interface Turn {
  t: number;
  sent: RecordedRequest;
  bill: Bill;
}

type Stats = Record<string, number>;

function rawMessages(raw: string): string[] {
  const index = new RawIndex(raw);
  const out: string[] = [];
  for (let i = 0, s = index.message(0); s; s = index.message(++i)) out.push(raw.slice(s.start, s.end));
  return out;
}

const messagesOf = (r: RecordedRequest) => r.body.messages as unknown[];
const toolsOf = (r: RecordedRequest) => canonical(r.body.tools ?? []);

/** What the provider must read on a warm turn: everything the previous request anchored. */
function expectedRead(dialect: Dialect, prev: RecordedRequest): number {
  const segs = promptSegments(dialect, prev.body);
  let end = segs.length - 1;
  if (dialect === 'anthropic') while (end >= 0 && segs[end]!.breakpointTtlMs === undefined) end--;
  const prefix = segs.slice(0, end + 1).reduce((n, s) => n + s.tokens, 0);
  if (prefix < 1024) return 0;
  return dialect === 'anthropic' ? prefix : 1024 + Math.floor((prefix - 1024) / 128) * 128;
}

describe.each(['anthropic', 'openai'] as const)('a 60-turn %s session through the gateway', (dialect) => {
  const session = `cache-e2e-${dialect}`;
  const steps = agentSteps(TURNS, dialect === 'anthropic' ? 23 : 29);
  const log: BilledRequest[] = [];
  const turns: Turn[] = [];
  let now = 1_700_000_000_000;
  let upstream: FakeUpstream;
  let gateway: GatewayHarness;
  let store: LossyStore;
  let beforeLoss: Stats;
  let lostSlots = 0;

  const stats = async (): Promise<Stats> => (await (await fetch(`${gateway.url}/stats`)).json()) as Stats;

  beforeAll(async () => {
    const sim = new PromptCacheSim({ now: () => now });
    upstream = await startFakeUpstream(cachingScript(sim, jsonScript({ expand: false }), log));
    store = new LossyStore(new MemoryHotStore({ now: () => now }));
    // The blanket tail gate under test: priced rewrites off (test/e2e/cache-priced.test.ts covers them).
    gateway = await startGateway(upstream.url, { CONFIG, REWRITE_PAYBACK_TURNS: '0' }, { clock: { now: () => now }, store });
    const path = dialect === 'anthropic' ? '/anthropic/v1/messages' : '/openai/v1/chat/completions';
    const auth: Record<string, string> =
      dialect === 'anthropic' ? { 'x-api-key': 'sk-ant-e2e', 'anthropic-version': '2023-06-01' } : { authorization: 'Bearer sk-e2e' };
    for (let t = 1; t <= TURNS; t++) {
      now += t === COLD_TURN ? GAP_MS[dialect] : STEP_MS;
      if (t === LOSS_TURN) {
        beforeLoss = await stats();
        lostSlots = store.loseFrozen(`default:${session}`);
      }
      const body = dialect === 'anthropic' ? anthropicTurn(steps, t) : openaiTurn(steps, t);
      const at = upstream.requests.length;
      const res = await fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-context-guru-session': session, ...auth },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      await res.json();
      expect(upstream.requests.length).toBe(at + 1);
      turns.push({ t, sent: upstream.requests[at]!, bill: log[at]!.bill });
    }
  }, 120_000);

  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  const pairs = () => turns.slice(1).map((cur, k) => ({ prev: turns[k]!, cur }));

  it('never changes a message it sent before, except on the proven-cold turn', () => {
    for (const { prev, cur } of pairs()) {
      const bust = prefixBust(prev.sent.body, cur.sent.body);
      if (cur.t === COLD_TURN) expect(bust).toBeGreaterThanOrEqual(0);
      else expect([cur.t, bust]).toEqual([cur.t, -1]);
    }
  });

  it('keeps earlier messages byte-identical (only a moved cache_control breakpoint may differ)', () => {
    for (const { prev, cur } of pairs()) {
      if (cur.t === COLD_TURN) continue;
      const a = rawMessages(prev.sent.raw);
      const b = rawMessages(cur.sent.raw);
      for (let i = 0; i < a.length; i++) {
        if (a[i] === b[i]) continue;
        expect(a[i]!.includes('cache_control') || b[i]!.includes('cache_control')).toBe(true);
        expect(canonical(JSON.parse(a[i]!))).toBe(canonical(JSON.parse(b[i]!)));
      }
    }
  });

  it('adds markers only in the uncached tail on warm turns, and at depth on the cold turn', () => {
    let tailMarkers = 0;
    let coldDepthMarkers = 0;
    for (const { prev, cur } of pairs()) {
      const a = messagesOf(prev.sent).map(canonical);
      const b = messagesOf(cur.sent).map(canonical);
      b.forEach((m, i) => {
        if (!MARKER.test(m) || (i < a.length && MARKER.test(a[i]!))) return;
        if (i >= a.length) tailMarkers++;
        else if (cur.t === COLD_TURN) coldDepthMarkers++;
        else throw new Error(`turn ${cur.t}: new marker at depth ${i} (boundary ${a.length})`);
      });
    }
    expect(tailMarkers).toBeGreaterThan(0);
    expect(coldDepthMarkers).toBeGreaterThan(3);
  });

  it('the cold turn found the provider cache gone, and the warm turns after it read everything', () => {
    for (const { prev, cur } of pairs()) {
      if (cur.t === COLD_TURN) {
        expect(cur.bill.cacheRead).toBe(0);
        continue;
      }
      if (headChanged(dialect, prev.sent.body, cur.sent.body)) continue;
      expect([cur.t, cur.bill.cacheRead]).toEqual([cur.t, expectedRead(dialect, prev.sent)]);
    }
  });

  it('repairs a lost store with the same bytes and reports the drop and the repair', async () => {
    expect(lostSlots).toBeGreaterThan(3);
    const s = await stats();
    expect(s.frozen_dropped).toBe(lostSlots);
    expect(s.frozen_repaired).toBe(lostSlots);
    expect(s.frozen_flips).toBe(0);
    expect(s.frozen_misses).toBeGreaterThan(beforeLoss.frozen_misses!);
    // The loss turn and the one after it sent the previous prefix unchanged (checked above too).
    const loss = turns[LOSS_TURN - 1]!;
    expect(prefixBust(turns[LOSS_TURN - 2]!.sent.body, loss.sent.body)).toBe(-1);
  });

  it('advertises the expand tool from the first offload on, so tools change shape at most once', () => {
    const tools = turns.map((x) => toolsOf(x.sent));
    const first = tools.findIndex((t) => t.includes('context_guru_expand'));
    expect(first).toBeGreaterThanOrEqual(0);
    for (const t of tools.slice(first)) expect(t).toBe(tools[first]);
    expect(new Set(tools).size).toBeLessThanOrEqual(2);
    const changes = pairs().filter(({ prev, cur }) => headChanged(dialect, prev.sent.body, cur.sent.body));
    expect(changes.length).toBeLessThanOrEqual(1);
  });

  it('every marker of the last turn (most of them replays) still resolves through /expand', async () => {
    const ids = [...new Set([...JSON.stringify(messagesOf(turns[TURNS - 1]!.sent)).matchAll(/<<cg:([0-9a-f]{16})>>/g)].map((m) => m[1]!))];
    expect(ids.length).toBeGreaterThan(5);
    for (const id of ids) {
      const res = await fetch(`${gateway.url}/expand?id=${id}`, { headers: { 'x-context-guru-session': session } });
      expect([id, res.status]).toEqual([id, 200]);
      await res.text();
    }
  });

  it('reports usage, frozen tokens and replays in /stats', async () => {
    const s = await stats();
    const sum = (k: keyof Bill) => log.reduce((n, r) => n + r.bill[k], 0);
    expect(s.requests).toBe(TURNS);
    expect(s.fresh_input_tokens).toBe(sum('fresh'));
    expect(s.cache_read_tokens).toBe(sum('cacheRead'));
    expect(s.cache_write_tokens).toBe(sum('cacheWrite'));
    expect(s.output_tokens).toBe(sum('output'));
    expect(s.frozen_hits).toBeGreaterThan(TURNS);
    expect(s.attempted_tokens).toBeLessThan(s.tokens_before! / 5);
    expect(s.frozen_tokens).toBe(s.tokens_before! - s.attempted_tokens!);
    expect(s.savings_pct_attempted).toBeGreaterThan(0);
    const saved = s.tokens_before! - s.tokens_after!;
    expect(s.savings_pct_new_input).toBeCloseTo((saved / (s.fresh_input_tokens! + s.cache_write_tokens! + saved)) * 100, 1);
    expect(s.compaction_resets).toBe(0);
  });
});
