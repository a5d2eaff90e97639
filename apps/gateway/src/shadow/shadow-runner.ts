// Shadow evaluation of a tenant's candidate config version. The request path asks `pick` up front
// (a coin flip at the candidate's `sample`) and, once its upstream request is under way, hands the
// body and the active pipeline's report to `offer`. The candidate then runs on the same body, off
// the hot path, through the detached preparation the admin's dry-run uses (prepareDetached: a
// store that keeps nothing, no turn cache, no models), so it never stashes, never touches session
// state and never changes a forwarded byte. Its CPU is bounded: one job at a time from a small
// queue, a body size limit and a time limit, and nothing starts while the gateway is busy
// (compression in progress or waiting, or a lagging event loop) — a job refused for any of these
// is dropped and counted by reason, never delayed into the hot path.
import { systemClock, totalTokens, type Clock } from '@context-guru/components';
import type { Readable } from 'node:stream';
import { errorText, type Logger } from '../observability/logger';
import type { RequestReport } from '../observability/request-report';
import type { ShadowCandidate, TenantRuntime } from '../tenancy/tenant-runtime';
import { decodeRequest } from '../wire/request.wire';
import type { Dialect } from '../wire/wire.types';
import { prepareDetached } from './detached-prepare';
import { actedComponents, type DropReason, type ShadowLedger } from './shadow-ledger';
import type { Pressure } from './shadow-pressure';
import type { ShadowPair } from '@context-guru/storage';

export interface ShadowLimits {
  /** Jobs waiting behind the one running; an offer finding the queue full is dropped. */
  queue: number;
  /** Bodies larger than this (bytes) are not evaluated. */
  maxBytes: number;
  /** A candidate run taking longer is discarded (it cannot be pre-empted; the size limit bounds it). */
  timeoutMs: number;
}

export const SHADOW_LIMITS: ShadowLimits = { queue: 4, maxBytes: 1024 * 1024, timeoutMs: 2000 };

/** A request picked for shadow evaluation: the candidate it was picked for. */
export interface ShadowTicket {
  candidate: ShadowCandidate;
}

interface Job {
  pair: ShadowPair;
  candidate: ShadowCandidate;
  dialect: Dialect;
  body: string | Buffer;
  active: RequestReport;
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

  constructor(private readonly o: ShadowRunnerOptions) {
    this.limits = { ...SHADOW_LIMITS, ...o.limits };
    this.random = o.random ?? Math.random;
  }

  /** Whether this request is in the candidate's sample (decided before the body is read). */
  pick(tenant: TenantRuntime): ShadowTicket | undefined {
    const candidate = tenant.shadow;
    if (!candidate || candidate.sample <= 0 || this.random() >= candidate.sample) return undefined;
    return { candidate };
  }

  /**
   * The picked request's body and what the active pipeline did with it; returns at once. A request
   * the active side did not compress for its own reasons (bypass, fail-open) compares nothing.
   */
  offer(
    ticket: ShadowTicket | undefined,
    tenant: TenantRuntime,
    dialect: Dialect,
    body: string | Buffer | Readable,
    active: RequestReport,
  ): void {
    if (!ticket || active.bypassed || active.failOpen !== undefined) return;
    const pair = { tenant: tenant.id, activeVersion: tenant.configVersion, candidateVersion: ticket.candidate.version };
    const ledger = this.o.ledger;
    ledger.sampled(pair);
    if (typeof body !== 'string' && !Buffer.isBuffer(body)) return ledger.dropped(pair, 'too_large');
    const reason = this.refusal(body, active);
    if (reason) return ledger.dropped(pair, reason);
    this.queue.push({ pair, candidate: ticket.candidate, dialect, body, active });
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
    const { prepared } = await prepareDetached(job.candidate.runtime, job.dialect, raw, this.o.clock ?? systemClock);
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
