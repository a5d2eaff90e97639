// Savings over time and the recent sessions, for the admin's built-in page: the laptop user has
// no Prometheus to keep history. Both are bounded whatever the traffic: a fixed ring of minute
// buckets per tenant (plus the whole gateway) and a small most-recently-seen session list.
import { deleteOldest } from '@context-guru/components';
import { type RequestReport } from '@context-guru/engine';

/** Minutes of history kept (three hours). */
const MINUTES = 180;
/** Sessions listed, most recently seen first. */
const RECENT_SESSIONS = 50;
const MINUTE_MS = 60_000;
/**
 * The whole gateway's series sits beside the tenants' under this key.
 * @internal exported for tests
 */
export const ALL_TENANTS = '*';

export interface MinuteBucket {
  /** Start of the minute, epoch ms. */
  at: number;
  requests: number;
  tokens_before: number;
  tokens_after: number;
}

export interface SessionSummary {
  /** The session's id within its tenant: the client's own (hashed when not path-safe), or the content hash. */
  session: string;
  tenant: string;
  turns: number;
  tokens_before: number;
  tokens_after: number;
  first_seen: number;
  last_seen: number;
}

export class SavingsTimeline {
  private readonly series = new Map<string, MinuteBucket[]>();
  /** Insertion order is recency order: a seen session is deleted and set again. */
  private readonly sessions = new Map<string, SessionSummary>();

  constructor(private readonly now: () => number = Date.now) {}

  record(r: RequestReport): void {
    const at = this.now();
    const before = r.enforced ? r.tokensBefore : 0;
    const after = r.enforced ? r.tokensAfter : 0;
    this.add(ALL_TENANTS, at, before, after);
    this.add(r.tenant, at, before, after);
    if (r.session) this.touch(r, at, before, after);
  }

  /** Minute buckets oldest first, for one tenant or the whole gateway; empty minutes are absent. */
  minutes(tenant: string = ALL_TENANTS): MinuteBucket[] {
    const horizon = Math.floor(this.now() / MINUTE_MS) * MINUTE_MS - (MINUTES - 1) * MINUTE_MS;
    return (this.series.get(tenant) ?? []).filter((b) => b.at >= horizon).map((b) => ({ ...b }));
  }

  /** Most recently seen first; one tenant's, or every tenant's. */
  recentSessions(tenant?: string): SessionSummary[] {
    const all = [...this.sessions.values()].reverse();
    return (tenant === undefined || tenant === ALL_TENANTS ? all : all.filter((s) => s.tenant === tenant)).map((s) => ({ ...s }));
  }

  private add(key: string, at: number, before: number, after: number): void {
    const start = Math.floor(at / MINUTE_MS) * MINUTE_MS;
    let ring = this.series.get(key);
    if (!ring) {
      ring = [];
      this.series.set(key, ring);
    }
    let last = ring[ring.length - 1];
    if (!last || last.at !== start) {
      last = { at: start, requests: 0, tokens_before: 0, tokens_after: 0 };
      ring.push(last);
      if (ring.length > MINUTES) ring.splice(0, ring.length - MINUTES);
    }
    last.requests++;
    last.tokens_before += before;
    last.tokens_after += after;
  }

  private touch(r: RequestReport, at: number, before: number, after: number): void {
    const id = `${r.tenant}\u0000${r.session}`;
    const seen = this.sessions.get(id);
    // Session keys are `${tenant}:${id}`; the page lists the id beside its tenant.
    const key = r.session ?? '';
    const session = key.startsWith(`${r.tenant}:`) ? key.slice(r.tenant.length + 1) : key;
    const s = seen ?? { session, tenant: r.tenant, turns: 0, tokens_before: 0, tokens_after: 0, first_seen: at, last_seen: at };
    s.turns++;
    s.tokens_before += before;
    s.tokens_after += after;
    s.last_seen = at;
    this.sessions.delete(id);
    this.sessions.set(id, s);
    if (this.sessions.size > RECENT_SESSIONS) deleteOldest(this.sessions);
  }
}
