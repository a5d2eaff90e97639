// Shadow evaluation of a tenant's candidate config version. The sample is drawn per session (a
// hash of the session key against the candidate's `sample`, so a sampled session is evaluated on
// every turn and the candidate builds the history it would have as the active config); a request
// whose session is unknown (an empty active pipeline decodes nothing) falls back to a per-request
// coin drawn by `pick` when the exchange opens. Once the upstream request is under way the request
// path hands the body and the active pipeline's report to `offer`; the candidate then runs on the
// same body, off the hot path, through the detached preparation the admin's dry-run uses
// (prepareDetached: no turn cache, no models) against its own private session memory
// (ShadowSessionStore), so it never stashes, never touches the tenant's session state and never
// changes a forwarded byte. Its CPU is bounded: one job at a time from a small queue, a body size
// limit and a time limit, and nothing starts while the gateway is busy (compression in progress or
// waiting, or a lagging event loop) — a job refused for any of these is dropped and counted by
// reason, never delayed into the hot path.
import {
  sessionPoint,
  errorText,
  type Logger,
  type RequestReport,
  type ShadowCandidate,
  type TenantRuntime,
  decodeRequest,
  type Dialect,
  prepareDetached,
  type DropReason,
} from '@context-guru/engine';
import { systemClock, totalTokens, type Clock } from '@context-guru/components';
import type { Readable } from 'node:stream';
import { actedComponents, type ShadowLedger } from './shadow-ledger';
import type { Pressure } from './shadow-pressure';
import { ShadowSessionStore } from './shadow-session.store';
import type { ShadowPair } from '@context-guru/storage';

export interface ShadowLimits {
  /** Jobs waiting behind the one running; an offer finding the queue full is dropped. */
  queue: number;
  /** Bodies larger than this (bytes) are not evaluated. */
  maxBytes: number;
  /** A candidate run taking longer is discarded (it cannot be pre-empted; the size limit bounds it). */
  timeoutMs: number;
}

const SHADOW_LIMITS: ShadowLimits = { queue: 4, maxBytes: 1024 * 1024, timeoutMs: 2000 };

/** A request on a tenant with a shadow candidate. */
export interface ShadowTicket {
  candidate: ShadowCandidate;
  /** The per-request draw, used when the session is not known. */
  coin: number;
  /** The request may be sampled without a session key: read its body whole, never streamed. */
  wholeBody: boolean;
}

/**
 * Where a session falls in [0, 1) for the shadow sample: salted with `shadow`, so independent of its holdout arm.
 * @internal exported for tests
 */
export function sessionShare(tenant: string, session: string): number {
  return sessionPoint('shadow', tenant, session);
}

interface Job {
  pair: ShadowPair;
  candidate: ShadowCandidate;
  dialect: Dialect;
  body: string | Buffer;
  active: RequestReport;
  sessionHeader?: string;
}

export interface ShadowRunnerOptions {
  ledger: ShadowLedger;
  pressure: Pressure;
  log: Logger;
  limits?: Partial<ShadowLimits>;
  random?: () => number;
  clock?: Clock;
}

export class ShadowRunner {
  private readonly queue: Job[] = [];
  private running: Promise<void> | undefined;
  private readonly limits: ShadowLimits;
  private readonly random: () => number;
  /** Each tenant's candidate memory, for the candidate runtime it was built for. */
  private readonly sessions = new Map<string, { runtime: TenantRuntime; store: ShadowSessionStore }>();

  constructor(private readonly o: ShadowRunnerOptions) {
    this.limits = { ...SHADOW_LIMITS, ...o.limits };
    this.random = o.random ?? Math.random;
  }

  /** A ticket for a tenant with a shadow candidate (drawn before the body is read). */
  pick(tenant: TenantRuntime): ShadowTicket | undefined {
    const candidate = tenant.shadow;
    if (!candidate || candidate.sample <= 0) return undefined;
    const coin = this.random();
    return { candidate, coin, wholeBody: coin < candidate.sample };
  }

  /**
   * The request's body and what the active pipeline did with it; returns at once. A request out of
   * the sample, or one the active side did not compress for its own reasons (bypass, fail-open, a
   * holdout session), compares nothing.
   */
  offer(
    ticket: ShadowTicket | undefined,
    tenant: TenantRuntime,
    dialect: Dialect,
    body: string | Buffer | Readable,
    active: RequestReport,
    sessionHeader?: string,
  ): void {
    // A holdout session forwards untouched on purpose: it says nothing of what the active config does.
    if (!ticket || active.bypassed || active.failOpen !== undefined || active.arm === 'holdout') return;
    const share = active.session ? sessionShare(tenant.id, active.session) : ticket.coin;
    if (share >= ticket.candidate.sample) return;
    const pair = { tenant: tenant.id, activeVersion: tenant.configVersion, candidateVersion: ticket.candidate.version };
    const ledger = this.o.ledger;
    ledger.sampled(pair);
    if (typeof body !== 'string' && !Buffer.isBuffer(body)) return ledger.dropped(pair, 'too_large');
    const reason = this.refusal(body, active);
    if (reason) return ledger.dropped(pair, reason);
    // The candidate keys its memory by the session the active side resolved (learned keys included),
    // so both sides follow the same session from turn to turn.
    this.queue.push({ pair, candidate: ticket.candidate, dialect, body, active, sessionHeader: active.session || sessionHeader });
    this.pump();
  }

  /** Jobs waiting (not counting the one running). */
  get queued(): number {
    return this.queue.length;
  }

  /** Resolves once every queued job has run or been dropped. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Waits for the queue, then forgets every candidate's session memory. */
  async close(): Promise<void> {
    await this.idle();
    for (const { store } of this.sessions.values()) await store.close();
    this.sessions.clear();
  }

  /** The candidate's private session memory (a new candidate version starts with none). */
  memory(tenant: string, runtime: TenantRuntime): ShadowSessionStore {
    let held = this.sessions.get(tenant);
    if (held?.runtime !== runtime) {
      void held?.store.close();
      const clock = this.o.clock;
      held = { runtime, store: new ShadowSessionStore({ now: clock ? () => clock.now() : undefined }) };
      this.sessions.set(tenant, held);
    }
    return held.store;
  }

  private refusal(body: string | Buffer, active: RequestReport): DropReason | undefined {
    if (Buffer.byteLength(body) > this.limits.maxBytes) return 'too_large';
    // A shed request met a full compression gate: the gateway is under load.
    if (active.shed || this.o.pressure.busy()) return 'busy';
    if (this.queue.length >= this.limits.queue) return 'queue_full';
    return undefined;
  }

  private pump(): void {
    if (this.running || this.queue.length === 0) return;
    this.running = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.next())
      .finally(() => {
        this.running = undefined;
        this.pump();
      });
  }

  private async next(): Promise<void> {
    const job = this.queue.shift();
    if (!job) return;
    // Load may have arrived while it waited: the real requests go first.
    if (this.o.pressure.busy()) return this.o.ledger.dropped(job.pair, 'busy');
    try {
      const outcome = await this.evaluate(job);
      if (outcome === 'timeout') this.o.ledger.dropped(job.pair, 'timeout');
    } catch (err) {
      this.o.log.debug('shadow evaluation failed', { tenant: job.pair.tenant, version: job.pair.candidateVersion, error: errorText(err) });
      this.o.ledger.dropped(job.pair, 'failed');
    } finally {
      this.o.pressure.excuse();
    }
  }

  private async evaluate(job: Job): Promise<'done' | 'timeout'> {
    const started = performance.now();
    const raw = typeof job.body === 'string' ? job.body : job.body.toString('utf8');
    const { prepared } = await prepareDetached(job.candidate.runtime, job.dialect, raw, {
      clock: this.o.clock ?? systemClock,
      store: this.memory(job.pair.tenant, job.candidate.runtime),
      sessionHeader: job.sessionHeader,
    });
    if (performance.now() - started > this.limits.timeoutMs) return 'timeout';
    const c = prepared.report;
    if (c.failOpen !== undefined) throw new Error(`candidate failed open: ${c.failOpen}`);
    if (c.bypassed) return 'done';
    // An empty pipeline on either side is a pass-through that counted nothing: it kept every token.
    const before = job.active.enforced
      ? job.active.tokensBefore
      : c.enforced
        ? c.tokensBefore
        : totalTokens(decodeRequest(job.dialect, raw).messages);
    this.o.ledger.evaluated(job.pair, {
      tokensBefore: before,
      tokensAfterActive: job.active.enforced ? job.active.tokensAfter : before,
      tokensAfterCandidate: c.enforced ? c.tokensAfter : before,
      actedActive: job.active.enforced ? actedComponents(job.active.reports) : [],
      actedCandidate: c.enforced ? actedComponents(c.reports) : [],
    });
    return 'done';
  }
}
