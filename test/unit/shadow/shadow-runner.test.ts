// The shadow runner: a sampled session's requests go through the candidate pipeline detached (its
// own session memory, nothing stashed), one job at a time, with the figures of the candidate
// really serving them; it is dropped and counted — never run — when the body is too large,
// the queue is full, the gateway is busy (a compression in progress or waiting, a lagging loop, a
// shed request) or the run took too long; the active and candidate figures come from the same body.
import { GatewayMetrics } from '../../../apps/gateway/src/observability/metrics';
import type { RequestReport } from '../../../libs/engine/src/report/request-report';
import { createLogger } from '../../../libs/engine/src/logger';
import { CompressionGate } from '../../../apps/gateway/src/http/compression-gate';
import { prepareDetached } from '../../../libs/engine/src/detached/detached-prepare';
import { ShadowLedger } from '../../../apps/gateway/src/shadow/shadow-ledger';
import { GatewayPressure, type Pressure } from '../../../apps/gateway/src/shadow/shadow-pressure';
import { ShadowRunner, sessionShare, type ShadowLimits } from '../../../apps/gateway/src/shadow/shadow-runner';
import { prepareRequest } from '../../../libs/engine/src/prepare-request';
import { MemoryHotStore } from '@context-guru/storage';
import type { Clock } from '@context-guru/components';
import { candidateRuntime, createTenantRuntime, type TenantRuntime } from '../../../libs/engine/src/tenancy/tenant-runtime';
import { agentSteps, anthropicTurn, openaiTurn } from '../../support/transcripts';

const log = createLogger('error', () => undefined);

function tenantWithShadow(active = { preset: 'safe' }, candidate = { preset: 'agent' }, sample = 1): TenantRuntime {
  return createTenantRuntime('acme', { ...active, shadow: { version: 2, sample } }, 3, false, {
    version: 2,
    sample,
    runtime: candidateRuntime('acme', { ...candidate, shadow: { version: 9, sample: 1 }, holdout: { fraction: 0.5 } }, 2),
  });
}

function setup(o: { busy?: () => boolean; limits?: Partial<ShadowLimits>; random?: () => number; clock?: Clock } = {}) {
  const metrics = new GatewayMetrics('test');
  const ledger = new ShadowLedger(metrics);
  let excused = 0;
  const pressure: Pressure = { busy: o.busy ?? (() => false), excuse: () => excused++, close() {} };
  const runner = new ShadowRunner({ ledger, pressure, log, limits: o.limits, random: o.random, clock: o.clock });
  return { metrics, ledger, runner, excused: () => excused };
}

const body = (t: number, dialect: 'openai' | 'anthropic' = 'openai') =>
  JSON.stringify(dialect === 'openai' ? openaiTurn(agentSteps(24, 5), t) : anthropicTurn(agentSteps(24, 5), t));

async function activeReport(tenant: TenantRuntime, raw: string, dialect: 'openai' | 'anthropic' = 'openai'): Promise<RequestReport> {
  return (await prepareDetached(tenant, dialect, raw)).prepared.report;
}

const counts = (ledger: ShadowLedger) => ledger.pairs('acme')[0]?.counts;

describe('shadow runner', () => {
  it('evaluates the candidate on the same body and records both sides; the candidate’s own shadow and holdout are dropped', async () => {
    const tenant = tenantWithShadow();
    expect(tenant.shadow!.runtime.document).toEqual({ preset: 'agent' });
    const { ledger, runner, metrics, excused } = setup();
    for (const dialect of ['openai', 'anthropic'] as const) {
      const raw = body(20, dialect);
      const active = await activeReport(tenant, raw, dialect);
      runner.offer(runner.pick(tenant), tenant, dialect, raw, active);
      await runner.idle();
    }
    const c = counts(ledger)!;
    expect(ledger.pairs('acme')[0]!.pair).toEqual({ tenant: 'acme', activeVersion: 3, candidateVersion: 2 });
    expect(c).toMatchObject({ sampled: 2, evaluated: 2, dropped: {} });
    // safe only repacks; agent masks and extracts on top: the candidate removes more of the same body.
    expect(c.tokensAfterActive).toBeLessThan(c.tokensBefore);
    expect(c.tokensAfterCandidate).toBeLessThan(c.tokensAfterActive);
    expect(c.actedActive.format).toBe(2);
    expect(c.actedCandidate.mask).toBe(2);
    expect(c.actedActive.mask).toBeUndefined();
    expect(excused()).toBe(2);
    const text = await metrics.registry.metrics();
    expect(text).toContain('cg_shadow_evaluated_total{tenant="acme"} 2');
    expect(text).toContain(`cg_shadow_tokens_total{tenant="acme",side="candidate"} ${c.tokensAfterCandidate}`);
    expect(text).toContain('cg_shadow_candidate_version{tenant="acme"} 2');
  });

  it('samples whole sessions at the candidate’s rate (a request without a session key by its own draw), never what the active side bypassed, failed open on or held out', async () => {
    const tenant = tenantWithShadow(undefined, undefined, 0.5);
    const { runner, ledger } = setup({ limits: { queue: 100 } });
    const sessions = Array.from({ length: 12 }, (_, i) => `s-${i}`);
    const sampledTurns: string[] = [];
    for (const t of [4, 8]) {
      for (const session of sessions) {
        const raw = body(t);
        const active = (await prepareDetached(tenant, 'openai', raw, { sessionHeader: session })).prepared.report;
        // The draw is on the session key the request resolved to (the same on every turn).
        if (sessionShare('acme', active.session!) < 0.5) sampledTurns.push(`${session}@${t}`);
        runner.offer(runner.pick(tenant), tenant, 'openai', raw, active, session);
      }
    }
    await runner.idle();
    const inSample = new Set(sampledTurns.map((x) => x.split('@')[0]));
    expect(inSample.size).toBeGreaterThan(0);
    expect(inSample.size).toBeLessThan(sessions.length);
    // Every turn of each sampled session, nothing of the others.
    expect(sampledTurns).toHaveLength(2 * inSample.size);
    expect(counts(ledger)).toMatchObject({ sampled: sampledTurns.length, evaluated: sampledTurns.length });
    // An empty active pipeline resolves no session: the request's own draw decides.
    const off = tenantWithShadow({ preset: 'off' }, undefined, 0.25);
    const draws = [0.1, 0.3];
    const coins = setup({ random: () => draws.shift()! });
    const tickets = [coins.runner.pick(off)!, coins.runner.pick(off)!];
    expect(tickets.map((x) => x.wholeBody)).toEqual([true, false]);
    const pass = await activeReport(off, body(4));
    for (const ticket of tickets) coins.runner.offer(ticket, off, 'openai', Buffer.from(body(4)), pass);
    await coins.runner.idle();
    expect(counts(coins.ledger)).toMatchObject({ sampled: 1, evaluated: 1 });
    expect(runner.pick(createTenantRuntime('plain', { preset: 'safe' }, 1))).toBeUndefined();
    const raw = body(6);
    const active = await activeReport(tenant, raw);
    const before = counts(ledger)!.sampled;
    const ticket = runner.pick(tenant);
    const always = tenantWithShadow();
    runner.offer(runner.pick(always), always, 'openai', raw, { ...active, bypassed: true });
    runner.offer(runner.pick(always), always, 'openai', raw, { ...active, failOpen: 'internal_error' });
    runner.offer(runner.pick(always), always, 'openai', raw, { ...active, enforced: false, arm: 'holdout' });
    await runner.idle();
    expect(ticket).toBeDefined();
    expect(counts(ledger)!.sampled).toBe(before);
  });

  it('remembers what the candidate did in each session: its figures are those of the candidate really serving the turns', async () => {
    const tenant = tenantWithShadow({ preset: 'balanced' }, { preset: 'agent' });
    let now = 1_700_000_000_000;
    const clock = { now: () => now };
    const { runner, ledger } = setup({ clock });
    const real = new MemoryHotStore({ now: clock.now });
    const candidate = createTenantRuntime('acme', { preset: 'agent' }, 2);
    let realAfter = 0;
    let realBefore = 0;
    const steps = agentSteps(30, 8);
    for (let t = 3; t <= 30; t += 3) {
      now += 30_000;
      const raw = JSON.stringify(anthropicTurn(steps, t));
      const r = await prepareRequest(
        { store: real, clock, log, injectMode: 'auto' },
        {
          route: 'anthropic',
          dialect: 'anthropic',
          raw,
          tenant: candidate,
          pipeline: candidate.built.pipeline,
          cacheMode: 'auto',
          bypassHeader: false,
          sessionHeader: 'real',
        },
      );
      realBefore += r.report.tokensBefore;
      realAfter += r.report.tokensAfter;
      const active = (await prepareDetached(tenant, 'anthropic', raw, { sessionHeader: 'real', clock })).prepared.report;
      runner.offer(runner.pick(tenant), tenant, 'anthropic', raw, active, 'real');
      await runner.idle();
    }
    const c = counts(ledger)!;
    expect(c.evaluated).toBe(10);
    expect(c.tokensBefore).toBe(realBefore);
    expect(c.tokensAfterCandidate).toBe(realAfter);
    // Nothing it would have stashed was kept, and the memory is the candidate's alone.
    const memory = runner.memory('acme', tenant.shadow!.runtime);
    expect(memory.dropped).toBeGreaterThan(0);
    expect(await memory.getStash()).toBeNull();
    expect(memory.entries('acme')).toBeGreaterThan(0);
    // A new candidate version starts with no memory.
    expect(runner.memory('acme', tenantWithShadow().shadow!.runtime).entries('acme')).toBe(0);
    await runner.close();
    await real.close();
  });

  it('drops, counted by reason, what is too large, what finds the queue full, and everything while the gateway is busy', async () => {
    const tenant = tenantWithShadow();
    let busy = false;
    const { runner, ledger, metrics } = setup({ busy: () => busy, limits: { queue: 2, maxBytes: 60_000 } });
    const small = body(6);
    const large = body(24);
    expect(Buffer.byteLength(large)).toBeGreaterThan(60_000);
    expect(Buffer.byteLength(small)).toBeLessThan(60_000);
    const active = await activeReport(tenant, small);
    const ticket = runner.pick(tenant)!;
    runner.offer(ticket, tenant, 'openai', large, active);
    // Offered in one tick: two wait, the rest find the queue full; none has started yet.
    for (let i = 0; i < 5; i++) runner.offer(ticket, tenant, 'openai', small, active);
    expect(runner.queued).toBe(2);
    // A shed request met a full compression gate; busy refuses at the offer and again at the start.
    runner.offer(ticket, tenant, 'openai', small, { ...active, shed: true });
    busy = true;
    runner.offer(ticket, tenant, 'openai', small, active);
    await runner.idle();
    expect(counts(ledger)).toMatchObject({ sampled: 8, evaluated: 0, dropped: { too_large: 1, queue_full: 3, busy: 4 } });
    busy = false;
    runner.offer(ticket, tenant, 'openai', Buffer.from(small), active);
    await runner.idle();
    expect(counts(ledger)).toMatchObject({ sampled: 9, evaluated: 1 });
    const c = counts(ledger)!;
    expect(c.sampled).toBe(c.evaluated + Object.values(c.dropped).reduce((a, b) => a + b, 0));
    expect(await metrics.registry.metrics()).toContain('cg_shadow_dropped_total{tenant="acme",reason="queue_full"} 3');
  });

  it('runs one job at a time and discards a run over its time bound; a body that does not decode is counted failed', async () => {
    const tenant = tenantWithShadow();
    let inFlight = 0;
    let most = 0;
    const pipeline = tenant.shadow!.runtime.built.pipeline;
    const run = pipeline.run.bind(pipeline);
    pipeline.run = async (...args) => {
      most = Math.max(most, ++inFlight);
      try {
        return await run(...args);
      } finally {
        inFlight--;
      }
    };
    const { runner, ledger } = setup({ limits: { queue: 10, timeoutMs: 0 } });
    const raw = body(12);
    const active = await activeReport(tenant, raw);
    for (let i = 0; i < 4; i++) runner.offer(runner.pick(tenant)!, tenant, 'openai', raw, active);
    runner.offer(runner.pick(tenant)!, tenant, 'openai', '{"messages": "nope"', active);
    await runner.idle();
    expect(most).toBe(1);
    expect(counts(ledger)).toMatchObject({ sampled: 5, evaluated: 0, dropped: { timeout: 4, failed: 1 } });
  });

  it('an empty active pipeline kept every token: the candidate is compared against the body as received', async () => {
    const tenant = tenantWithShadow({ preset: 'off' }, { preset: 'agent' });
    const { runner, ledger } = setup();
    const raw = body(20);
    const transparent = await activeReport(tenant, raw);
    expect(transparent.enforced).toBe(false);
    runner.offer(runner.pick(tenant)!, tenant, 'openai', Buffer.from(raw), transparent);
    await runner.idle();
    const c = counts(ledger)!;
    expect(c.evaluated).toBe(1);
    expect(c.tokensBefore).toBeGreaterThan(1000);
    expect(c.tokensAfterActive).toBe(c.tokensBefore);
    expect(c.tokensAfterCandidate).toBeLessThan(c.tokensBefore);
  });
});

describe('gateway pressure', () => {
  it('is busy while a request compresses or waits, and while the loop keeps lagging; one burst or the runner’s own job is not load', async () => {
    const gate = new CompressionGate(4, 1);
    const p = new GatewayPressure(gate);
    try {
      expect(p.busy()).toBe(false);
      expect(gate.admit()).toBe(true);
      expect(p.busy()).toBe(true);
      gate.leave(true);
      expect(p.busy()).toBe(false);
      const hog = async (ms: number, times: number) => {
        for (let i = 0; i < times; i++) {
          const until = performance.now() + ms;
          while (performance.now() < until) {
            // hog the loop: the probe's next tick wakes late
          }
          await new Promise((r) => setTimeout(r, 1));
        }
      };
      // One late wake-up is a burst, not load.
      await hog(120, 1);
      expect(p.busy()).toBe(false);
      // A loop that stays late is.
      await hog(120, 10);
      expect(p.busy()).toBe(true);
      // The runner's own job does not count: the probe restarts after it.
      const quiet = new GatewayPressure(gate);
      try {
        const until = performance.now() + 120;
        while (performance.now() < until) {
          // a long evaluation
        }
        quiet.excuse();
        await new Promise((r) => setTimeout(r, 60));
        expect(quiet.busy()).toBe(false);
      } finally {
        quiet.close();
      }
    } finally {
      p.close();
    }
  });
});
