// What an on-call needs to see of the durable side, since /readyz stays 200 through a store
// outage: whether Postgres answers (probed on each scrape), the write-behind queue's depth, drops,
// refusals and failed flushes, and each retention purge's outcome and rows. docs/observability.md lists
// them; the chart's PrometheusRule alerts on them (docs/runbooks.md).
import { Counter, Gauge, type Registry } from 'prom-client';
import type { PurgeResult, WriteBehindStats } from '@context-guru/storage';

/** What the metrics read at scrape time (absent: no durable store, nothing exported for it). */
export interface DurableProbe {
  /** postgres, or pglite (embedded): the `kind` label. */
  kind: string;
  /** Resolves when Postgres answered a trivial query. */
  ping(): Promise<void>;
  queue(): WriteBehindStats | undefined;
}

/** How long a scrape waits for Postgres before reporting it down. */
const PROBE_MS = 1000;

export class StoreMetrics {
  /** Read by the collect callbacks, which prom-client calls with the metric as `this`. */
  private readonly source: { probe?: DurableProbe } = {};
  private seen = { checkpoints: 0, turns: 0, refused: 0, failures: 0 };

  readonly postgresUp: Gauge<'kind'>;
  readonly pending: Gauge<'kind'>;
  readonly pendingBytes: Gauge<'kind'>;
  readonly dropped: Counter<'kind'>;
  readonly refused: Counter;
  readonly flushFailures: Counter;
  readonly purges: Counter<'outcome'>;
  readonly purgedRows: Counter<'table'>;

  constructor(registry: Registry) {
    const registers = [registry];
    const source = this.source;
    this.postgresUp = new Gauge({
      name: 'cg_postgres_up',
      help: '1 when the durable store (kind: postgres, pglite) answered a probe at this scrape, 0 when it did not within 1 s.',
      // Labelled so that without a database there is no sample at all (an unlabelled gauge reads 0, which would page).
      labelNames: ['kind'] as const,
      registers,
      async collect() {
        const p = source.probe;
        if (!p) return;
        this.set(
          { kind: p.kind },
          await within(p.ping(), PROBE_MS).then(
            () => 1,
            () => 0,
          ),
        );
      },
    });
    this.pending = new Gauge({
      name: 'cg_write_behind_pending',
      help: 'Durable writes queued behind the hot store, not yet in Postgres, by kind (stashes, checkpoints, kept).',
      labelNames: ['kind'] as const,
      registers,
      collect() {
        const q = source.probe?.queue();
        if (!q) return;
        this.set({ kind: 'stashes' }, q.pendingStashes);
        this.set({ kind: 'checkpoints' }, q.pendingCheckpoints);
        this.set({ kind: 'kept' }, q.pendingKept);
      },
    });
    this.pendingBytes = new Gauge({
      name: 'cg_write_behind_pending_bytes',
      help: 'Bytes the queued writes hold against WRITE_BEHIND_MAX_MB, by kind: stashes (originals, never dropped), derived (checkpoints and turn writes, dropped first).',
      labelNames: ['kind'] as const,
      registers,
      collect() {
        const q = source.probe?.queue();
        if (!q) return;
        this.set({ kind: 'stashes' }, q.pendingStashBytes);
        this.set({ kind: 'derived' }, q.pendingDerivedBytes);
      },
    });
    this.dropped = new Counter({
      name: 'cg_write_behind_dropped_total',
      help: 'Re-derivable writes (kind: checkpoints, turns) dropped because the write-behind queue was full (Postgres away too long); originals never are.',
      labelNames: ['kind'] as const,
      registers,
      collect: () => this.fold(),
    });
    this.refused = new Counter({
      name: 'cg_write_behind_refused_total',
      help: 'Turns whose new originals were refused because originals alone filled the write-behind queue (counted in stash_refused too).',
      registers,
      collect: () => this.fold(),
    });
    this.flushFailures = new Counter({
      name: 'cg_write_behind_flush_failures_total',
      help: 'Write-behind flushes Postgres refused or did not answer (retried).',
      registers,
      collect: () => this.fold(),
    });
    this.purges = new Counter({
      name: 'cg_retention_purge_total',
      help: 'Retention purge rounds by outcome: ok, skipped (another replica held the purge), failed.',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.purgedRows = new Counter({
      name: 'cg_retention_purged_rows_total',
      help: 'Rows the retention purge deleted, by table.',
      labelNames: ['table'] as const,
      registers,
    });
    for (const outcome of ['ok', 'skipped', 'failed']) this.purges.inc({ outcome }, 0);
  }

  /** Starts reading the durable store (once it exists). */
  watch(probe: DurableProbe): void {
    this.source.probe = probe;
  }

  /** One purge round: its rows (undefined: another replica held it), or its error. */
  purged(result: PurgeResult | undefined, failed = false): void {
    if (failed) return void this.purges.inc({ outcome: 'failed' });
    if (!result) return void this.purges.inc({ outcome: 'skipped' });
    this.purges.inc({ outcome: 'ok' });
    for (const [table, n] of Object.entries(result)) this.purgedRows.inc({ table }, n);
  }

  /** The queue's cumulative counts → the two counters (each scrape adds what is new). */
  private fold(): void {
    const q = this.source.probe?.queue();
    if (!q) return;
    for (const kind of ['checkpoints', 'turns'] as const) this.dropped.inc({ kind }, Math.max(0, q.dropped[kind] - this.seen[kind]));
    this.refused.inc(Math.max(0, q.refused - this.seen.refused));
    this.flushFailures.inc(Math.max(0, q.failures - this.seen.failures));
    this.seen = { ...q.dropped, refused: q.refused, failures: q.failures };
  }
}

function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no answer')), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
