// The turn cache decodes a body's bytes to text reusing the previous turn's text for the bytes it
// shares: the text must always be exactly `bytes.toString('utf8')`, and everything forwarded must be
// what the full path (no turn cache, the whole body decoded) forwards, byte for byte.
import { MemoryHotStore } from '@context-guru/storage';
import { prepareRequest, type PrepareDeps } from '../../../libs/engine/src/prepare-request';
import { createTenantRuntime, type TenantRuntime } from '../../../libs/engine/src/tenancy/tenant-runtime';
import { TurnCache } from '../../../libs/engine/src/wire/turn-cache';
import type { Dialect } from '../../../libs/engine/src/wire/wire.types';
import { prepareDeps } from '../../support/prepare-deps';
import { agentSteps, anthropicTurn, openaiTurn } from '../../support/transcripts';

const BAD = 'BAD!BYTES';
/** 0xFF is never UTF-8; ED A0 80 (an encoded surrogate) decodes to three U+FFFD (nine bytes). */
const INVALID = Buffer.from([0xff, 0x20, 0xed, 0xa0, 0x80]);

/** The gateway's preparation on a store of its own; `turns` absent: the full path (no turn cache). */
function deps(turns?: TurnCache): PrepareDeps {
  return { ...prepareDeps(new MemoryHotStore({ ttlSeconds: 10_000, maxEntries: 100_000 })), turns };
}

/** The body as bytes; every `BAD` in it becomes invalid UTF-8. */
function bytesOf(body: unknown): Buffer {
  const parts = JSON.stringify(body).split(BAD);
  return Buffer.concat(parts.flatMap((p, i) => (i === 0 ? [Buffer.from(p)] : [INVALID, Buffer.from(p)])));
}

/** Runs one turn through the turn cache's text and decode, and through the full path; both must agree. */
class Replay {
  readonly cache = new TurnCache();
  private readonly fast = deps(this.cache);
  private readonly full = deps();

  constructor(private readonly dialect: Dialect) {}

  async turn(bytes: Buffer, tenant: TenantRuntime, session = 's'): Promise<void> {
    const text = this.cache.text(this.dialect, bytes, tenant.id);
    const raw = text.whole();
    expect(raw === bytes.toString('utf8')).toBe(true);
    const input = (text: string) => ({
      route: this.dialect,
      dialect: this.dialect,
      raw: text,
      tenant,
      pipeline: tenant.built.pipeline,
      cacheMode: 'auto' as const,
      sessionHeader: session,
      bypassHeader: false,
    });
    const [x, y] = [
      await prepareRequest(this.fast, { ...input(raw), text }),
      await prepareRequest(this.full, input(bytes.toString('utf8'))),
    ];
    expect(x.outgoing === y.outgoing).toBe(true);
    expect(x.advertised).toBe(y.advertised);
    expect(x.report.saved).toEqual(y.report.saved);
  }
}

type Body = { messages: Array<Record<string, unknown>> };

function turnBody(dialect: Dialect, steps: ReturnType<typeof agentSteps>, t: number): Body {
  const body = (dialect === 'openai' ? openaiTurn(steps, t) : anthropicTurn(steps, t)) as Body;
  // Multi-byte text ends the first message, right before the bytes the cache splits at.
  body.messages[0] = { ...body.messages[0], content: `Fix the parser — ünïcödé 🚀` };
  return body;
}

/** Replaces one character deep in the body (past the cache's key) by another of the same UTF-8 length. */
function editedAtDepth(bytes: Buffer): Buffer {
  const out = Buffer.from(bytes);
  const at = out.indexOf('e', Math.floor(out.length / 2));
  out[at] = 'E'.charCodeAt(0);
  return out;
}

describe('the turn cache decodes only the bytes a cached turn does not share', () => {
  for (const dialect of ['openai', 'anthropic'] as const) {
    it(`${dialect}: grown, re-sent, edited and re-configured turns decode and forward as the full path`, async () => {
      const steps = agentSteps(40, dialect === 'openai' ? 5 : 6);
      const agent = createTenantRuntime('t', { preset: 'agent' }, 1);
      const balanced = createTenantRuntime('t', { preset: 'balanced' }, 2);
      const replay = new Replay(dialect);
      for (let t = 1; t <= 36; t++) {
        // A config change mid-session, and back.
        const tenant = t > 14 && t <= 24 ? balanced : agent;
        const bytes = bytesOf(turnBody(dialect, steps, t));
        await replay.turn(bytes, tenant);
        if (t % 9 === 0) await replay.turn(bytes, tenant); // re-sent as it was
        if (t % 11 === 0) await replay.turn(editedAtDepth(bytes), tenant); // the client rewrote history
      }
      // Most turns were decoded from their new bytes only.
      expect(replay.cache.hits).toBeGreaterThan(30);
      expect(replay.cache.bytesShared).toBeGreaterThan(0);
    });

    it(`${dialect}: a same-length edit inside the shared messages is decoded, not taken from the cached text`, async () => {
      const steps = agentSteps(12, 3);
      const tenant = createTenantRuntime('t', { preset: 'agent' }, 1);
      const replay = new Replay(dialect);
      const first = bytesOf(turnBody(dialect, steps, 10));
      await replay.turn(first, tenant);
      const next = bytesOf(turnBody(dialect, steps, 11));
      await replay.turn(editedAtDepth(next), tenant);
    });
  }

  it('shares every message before a rewritten tail of up to three, and none when an older one changed', async () => {
    const steps = agentSteps(12, 4);
    const tenant = createTenantRuntime('t', { preset: 'agent' }, 1);
    for (const back of [1, 2, 3, 4]) {
      const replay = new Replay('anthropic');
      const prev = turnBody('anthropic', steps, 10);
      await replay.turn(bytesOf(prev), tenant);
      const next = turnBody('anthropic', steps, 11);
      // The client rewrote the message `back` from the end of what it sent last turn.
      const at = prev.messages.length - back;
      next.messages[at] = { ...next.messages[at], cache_marker_moved: true };
      const before = replay.cache.bytesShared;
      await replay.turn(bytesOf(next), tenant);
      const shared = replay.cache.bytesShared - before;
      // Shared up to the end of the last message before the rewritten one, or nothing at all.
      const full = JSON.stringify(prev);
      const end = full.indexOf('"messages":') + '"messages":'.length + JSON.stringify(prev.messages.slice(0, at)).length - 1;
      expect([back, shared]).toEqual([back, back <= 3 ? Buffer.byteLength(full.slice(0, end)) : 0]);
    }
  });

  it('invalid UTF-8 (decoded as U+FFFD) never shifts the byte offsets later turns reuse by', async () => {
    const steps = agentSteps(12, 4);
    const tenant = createTenantRuntime('t', { preset: 'balanced' }, 1);
    const replay = new Replay('openai');
    const body = (t: number, last: string) => {
      const b = turnBody('openai', steps, t);
      b.messages.push({ role: 'user', content: `invalid ${BAD} here` } as never, { role: 'user', content: last } as never);
      return b;
    };
    // Valid, then the invalid bytes arrive in the new part, then a turn that re-writes the newest
    // message: only correct byte offsets for the invalid message find the right shared prefix.
    await replay.turn(bytesOf(turnBody('openai', steps, 8)), tenant);
    await replay.turn(bytesOf(body(8, 'first')), tenant);
    await replay.turn(bytesOf(body(8, 'second')), tenant);
    // And a session that starts invalid.
    const fresh = new Replay('openai');
    await fresh.turn(bytesOf(body(8, 'first')), tenant);
    await fresh.turn(bytesOf(body(8, 'second')), tenant);
  });

  it('a text not made by text() (or taken twice) is decoded by comparing text, as before', async () => {
    const steps = agentSteps(12, 5);
    const tenant = createTenantRuntime('t', { preset: 'agent' }, 1);
    const cache = new TurnCache();
    const d = deps(cache);
    const input = (raw: string) => ({
      route: 'openai' as const,
      dialect: 'openai' as const,
      raw,
      tenant,
      pipeline: tenant.built.pipeline,
      cacheMode: 'auto' as const,
      sessionHeader: 's',
      bypassHeader: false,
    });
    const full = deps();
    const first = bytesOf(turnBody('openai', steps, 9));
    const text = cache.text('openai', first, tenant.id);
    await prepareRequest(d, { ...input(text.whole()), text });
    await prepareRequest(full, input(first.toString('utf8')));
    const raw = JSON.stringify(turnBody('openai', steps, 10));
    const out = await prepareRequest(d, input(raw));
    const expected = await prepareRequest(full, input(raw));
    expect(out.outgoing === expected.outgoing).toBe(true);
    expect(cache.hits).toBe(1);
  });

  it('hands the bytes to its entry: a decoded turn kept elsewhere (the repeat memo) holds no body', () => {
    const cache = new TurnCache();
    const raw = cache.text('openai', bytesOf(turnBody('openai', agentSteps(12, 6), 10)), 't');
    const turn = cache.decode('openai', raw, 't');
    expect(turn.bytes).toBeDefined();
    cache.encode(turn, turn.view.messages, { injectExpand: false }, 't');
    expect(turn.bytes).toBeUndefined();
  });
});
