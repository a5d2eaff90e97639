// The span tree of one client request (only built when tracing is on):
//   POST /<route>                    SERVER, the whole request until the last byte reached the client
//   ├─ cg.pipeline                   decode + session + components (laid out from measured marks)
//   │  └─ cg.component <name>        one per component run, in order, with its measured duration
//   ├─ cg.store.flush                originals and decisions made durable before forwarding
//   ├─ cg.upstream                   CLIENT, the first upstream call (headers arrival)
//   └─ cg.expand.round               one per continuation: resolving the ids, then
//      └─ cg.upstream                its upstream call
// The upstream calls carry a `traceparent` naming their span. Attributes are counts, names from
// bounded sets and a hash of the session id — never message content, never an error's text.
import { SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { propagation } from '@opentelemetry/api';
import type { Report } from '@context-guru/components';
import { sessionHash, type RequestReport } from '@context-guru/engine';

export type TraceHeaders = Record<string, string | string[] | undefined>;

export interface PreparedInfo {
  tenant: string;
  configVersion: number;
  preset: string;
  session: string;
}

const epoch = (t: number): number => performance.timeOrigin + t;
/**
 * Every span's start and end is read from this one monotonic clock. Left to itself the SDK stamps
 * spans with Date.now(), a wall clock with millisecond (on some hosts tens of milliseconds)
 * steps, while the pipeline's spans are laid out from performance.now() marks: mixed, an upstream
 * call could appear to start before the flush that preceded it.
 */
const now = (): number => epoch(performance.now());

function revertReason(rep: Report): string {
  const e = rep.error ?? '';
  if (e.startsWith('grew content tokens')) return 'grew';
  if (e.startsWith('dropped content without stashing')) return 'dropped_without_stash';
  return 'threw';
}

function componentAttributes(rep: Report): Attributes {
  const saved = Math.max(0, rep.tokensBefore - rep.tokensAfter);
  const a: Attributes = {
    'cg.component': rep.component,
    'cg.component.kind': rep.kind,
    'cg.acted': !rep.reverted && !rep.skipped && saved > 0,
    'cg.mutated': !rep.reverted && rep.changed.length > 0,
    'cg.reverted': rep.reverted,
    'cg.skipped': rep.skipped,
    'cg.saved_tokens': rep.reverted ? 0 : saved,
    'cg.tokens_before': rep.tokensBefore,
    'cg.tokens_after': rep.tokensAfter,
    'cg.changed_messages': rep.changed.length,
    'cg.duration_ms': rep.durationMs,
  };
  if (rep.reverted) a['cg.revert_reason'] = revertReason(rep);
  for (const [gate, n] of Object.entries(rep.gates)) a[`cg.gate.${gate}`] = n;
  return a;
}

export class RequestTrace {
  private readonly span: Span;
  private readonly ctx: Context;
  private round: { span: Span; ctx: Context; ids: number } | null = null;
  private rounds = 0;

  constructor(
    private readonly tracer: Tracer,
    parent: Context,
    dialect: string,
    route: string,
  ) {
    this.span = tracer.startSpan(
      `POST ${route}`,
      {
        kind: SpanKind.SERVER,
        startTime: now(),
        attributes: { 'cg.dialect': dialect, 'http.request.method': 'POST', 'http.route': route },
      },
      parent,
    );
    this.ctx = trace.setSpan(parent, this.span);
  }

  /** After the body was prepared: who, which config, and the pipeline's spans from its marks. */
  prepared(info: PreparedInfo, report: RequestReport): void {
    this.span.setAttributes({
      'cg.tenant': info.tenant,
      'cg.config_version': info.configVersion,
      'cg.preset': info.preset,
      // Keyed with the tenant's key (docs/security.md): a reader of traces cannot confirm a guessed session with it.
      ...(info.session ? { 'cg.session_hash': report.sessionHash ?? sessionHash(info.session) } : {}),
      ...(report.arm ? { 'cg.arm': report.arm } : {}),
    });
    const m = report.marks;
    if (!m) return;
    const pipeline = this.tracer.startSpan(
      'cg.pipeline',
      { startTime: epoch(m.pipelineStart), attributes: { 'cg.components': report.reports.length } },
      this.ctx,
    );
    const pctx = trace.setSpan(this.ctx, pipeline);
    let cursor = m.pipelineStart;
    for (const rep of report.reports) {
      const s = this.tracer.startSpan(
        `cg.component ${rep.component}`,
        { startTime: epoch(cursor), attributes: componentAttributes(rep) },
        pctx,
      );
      if (rep.reverted) s.setStatus({ code: SpanStatusCode.ERROR, message: `reverted: ${revertReason(rep)}` });
      cursor += rep.durationMs;
      s.end(epoch(cursor));
    }
    pipeline.end(epoch(Math.max(cursor, m.pipelineEnd)));
    if (m.flushEnd > m.flushStart) {
      const f = this.tracer.startSpan(
        'cg.store.flush',
        { startTime: epoch(m.flushStart), attributes: { 'cg.stashed': m.stashed } },
        this.ctx,
      );
      f.end(epoch(m.flushEnd));
    }
  }

  /** An expand round begins when the loop resolves its first id (the round span stays open until its call answers). */
  resolving(): void {
    if (!this.round) {
      const span = this.tracer.startSpan('cg.expand.round', { startTime: now(), attributes: { 'cg.round': ++this.rounds } }, this.ctx);
      this.round = { span, ctx: trace.setSpan(this.ctx, span), ids: 0 };
    }
    this.round.ids++;
  }

  /** Starts an upstream call span; the returned headers carry its traceparent. */
  upstream(headers: Record<string, string>): { headers: Record<string, string>; end(status: number | 'error'): void } {
    const round = this.round;
    const span = this.tracer.startSpan(
      'cg.upstream',
      { kind: SpanKind.CLIENT, startTime: now(), attributes: { 'cg.round': round ? this.rounds : 0 } },
      round?.ctx ?? this.ctx,
    );
    const out = { ...headers };
    propagation.inject(trace.setSpan(round?.ctx ?? this.ctx, span), out);
    return {
      headers: out,
      end: (status) => {
        if (status === 'error') span.setStatus({ code: SpanStatusCode.ERROR, message: 'transport error' });
        else {
          span.setAttribute('http.response.status_code', status);
          if (status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end(now());
        if (round && this.round === round) this.closeRound(true);
      },
    };
  }

  private closeRound(continued: boolean): void {
    if (!this.round) return;
    this.round.span.setAttributes({ 'cg.expand.ids': this.round.ids, 'cg.expand.continued': continued });
    this.round.span.end(now());
    this.round = null;
  }

  /** The request is over (last byte to the client, or failed): final attributes and outcome. */
  end(r: RequestReport, outcome: string): void {
    this.closeRound(false);
    const a: Attributes = {
      'cg.outcome': outcome,
      'cg.enforced': r.enforced,
      'cg.bypassed': r.bypassed,
      'cg.tokens_before': r.tokensBefore,
      'cg.tokens_after': r.tokensAfter,
      'cg.saved_tokens.prefix': r.saved.prefix,
      'cg.saved_tokens.tail': r.saved.tail,
      'cg.expand_rounds': r.expandRounds,
      'cg.bounces': r.bounces,
      'cg.added_ms': r.addedMs,
    };
    if (r.failOpen) a['cg.fail_open'] = r.failOpen;
    if (r.planned) {
      a['cg.rewrite.planned_from'] = r.planned.from;
      a['cg.rewrite.cost_tokens'] = r.planned.costTokens;
      a['cg.rewrite.saving_per_turn_tokens'] = r.planned.savingPerTurn;
      a['cg.rewrite.payback_turns'] = r.planned.paybackTurns;
    }
    if (r.guardReverted) a['cg.cache_guard_reverts'] = r.guardReverted;
    if (r.sse) a['cg.sse'] = r.sse;
    if (r.upstreamStatus !== undefined) a['http.response.status_code'] = r.upstreamStatus;
    if (r.usage) {
      a['cg.usage.fresh'] = r.usage.fresh;
      a['cg.usage.cache_read'] = r.usage.cacheRead;
      a['cg.usage.cache_write'] = r.usage.cacheWrite;
      a['cg.usage.output'] = r.usage.output;
    }
    this.span.setAttributes(a);
    if (outcome !== 'ok') this.span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
    this.span.end(now());
  }
}
