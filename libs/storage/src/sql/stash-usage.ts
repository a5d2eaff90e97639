// What the archive's byte budget reads (archive-budget.ts): a tenant's usage from the counters
// (stash-bytes.ts), which originals are archived already, and the size an original takes once
// stored. On the database's only writer (PGlite) the usage is kept from its own writes, so a
// check costs no statement.
import { sealedLength } from '../crypto/sealed-value';
import { col, type Row, type SqlClient } from './sql-client';
import { tenantUsage, utcDay, type CountedWrite } from './stash-bytes';

/** How long the only writer trusts the figure it keeps (buckets age out by the day). */
const USAGE_FRESH_MS = 60_000;

export class StashUsage {
  /** Per tenant, its archived bytes as this store last counted them (the only writer's figure). */
  private readonly known = new Map<string, { bytes: number; at: number }>();

  constructor(
    private readonly sql: SqlClient,
    private readonly sealed: boolean,
    private readonly now: () => number,
    private readonly retentionMs: number,
    private readonly bounded: <T>(p: Promise<T>) => Promise<T>,
  ) {}

  /** The tenant's archived bytes within retention. */
  async of(tenant: string): Promise<number> {
    const known = this.known.get(tenant);
    const now = this.now();
    if (known && now - known.at < USAGE_FRESH_MS) return known.bytes;
    const bytes = await this.bounded(tenantUsage(this.sql, tenant, utcDay(now - this.retentionMs)));
    if (this.sql.exclusive) this.known.set(tenant, { bytes, at: now });
    return bytes;
  }

  /** What an archive write counted (kept on the only writer). */
  record(counted: ReadonlyMap<string, CountedWrite>, at: number): void {
    if (!this.sql.exclusive) return;
    for (const [tenant, t] of counted) this.known.set(tenant, { bytes: t.before + t.added, at });
  }

  /** Which of `ids` the archive holds (their re-put costs the budget nothing). */
  async archivedAmong(tenant: string, ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows: Row[] = await this.bounded(
      this.sql.query('SELECT id FROM stash_archive WHERE tenant = $1 AND id = ANY($2::text[]) AND expires_at > $3', [
        tenant,
        [...ids],
        new Date(this.now()),
      ]),
    );
    return new Set(rows.map((r) => col.str(r, 'id')));
  }

  /** Bytes an original takes once archived (sealed when the store seals): what the counters count. */
  storedBytes(text: string): number {
    const n = Buffer.byteLength(text, 'utf8');
    return this.sealed ? sealedLength(n) : n;
  }

  /** Forgets the figures kept (after an erasure or a purge changed the counters). */
  forget(tenant?: string): void {
    if (tenant === undefined) this.known.clear();
    else this.known.delete(tenant);
  }
}
