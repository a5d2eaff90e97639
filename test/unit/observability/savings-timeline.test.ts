// The page's history stays bounded whatever the traffic: three hours of minute buckets per
// tenant and the whole gateway, and the 50 most recently seen sessions.
import { ALL_TENANTS, SavingsTimeline } from '../../../apps/gateway/src/observability/savings-timeline';
import { emptyReport, type RequestReport } from '../../../libs/engine/src/report/request-report';

function report(tenant: string, session: string | undefined, before: number, after: number, enforced = true): RequestReport {
  return { ...emptyReport('openai', tenant), session, enforced, tokensBefore: before, tokensAfter: after };
}

describe('SavingsTimeline', () => {
  it('sums a minute per tenant and for the whole gateway, and counts unenforced requests without tokens', () => {
    let now = Date.UTC(2026, 11, 1, 10, 0, 5);
    const t = new SavingsTimeline(() => now);
    t.record(report('acme', 'acme:s1', 1000, 400));
    t.record(report('beta', 'beta:s2', 500, 500));
    t.record(report('acme', 'acme:s1', 900, 300, false));
    now += 60_000;
    t.record(report('acme', 'acme:s1', 100, 50));
    expect(t.minutes('acme')).toEqual([
      { at: Date.UTC(2026, 11, 1, 10, 0), requests: 2, tokens_before: 1000, tokens_after: 400 },
      { at: Date.UTC(2026, 11, 1, 10, 1), requests: 1, tokens_before: 100, tokens_after: 50 },
    ]);
    expect(t.minutes(ALL_TENANTS).map((b) => [b.requests, b.tokens_before])).toEqual([
      [3, 1500],
      [1, 100],
    ]);
    expect(t.minutes('nobody')).toEqual([]);
  });

  it('keeps three hours of minutes and drops older ones', () => {
    let now = Date.UTC(2026, 11, 1, 0, 0);
    const t = new SavingsTimeline(() => now);
    for (let m = 0; m < 200; m++) {
      t.record(report('acme', undefined, 10, 5));
      now += 60_000;
    }
    now -= 60_000;
    const kept = t.minutes('acme');
    expect(kept).toHaveLength(180);
    expect(kept[0]!.at).toBe(Date.UTC(2026, 11, 1, 0, 20));
  });

  it('lists sessions most recently seen first, by their id within the tenant, at most 50', () => {
    let now = 1_000;
    const t = new SavingsTimeline(() => now++);
    for (let i = 0; i < 60; i++) t.record(report('acme', `acme:s${i}`, 10, 4));
    t.record(report('acme', 'acme:s30', 20, 10));
    const list = t.recentSessions();
    expect(list).toHaveLength(50);
    expect(list[0]).toMatchObject({ session: 's30', tenant: 'acme', turns: 2, tokens_before: 30, tokens_after: 14 });
    expect(list.map((s) => s.session)).not.toContain('s9');
    expect(t.recentSessions('beta')).toEqual([]);
  });
});
