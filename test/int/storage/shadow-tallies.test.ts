// shadow_tallies on the real Postgres and on PGlite: deltas from several replicas add up per
// version pair (drop reasons and component counts key by key), and each tenant keeps only its
// newest pairs.
import { shadowCounts, shadowTalliesRepository, type SqlClient } from '@context-guru/storage';
import { SQL_BACKENDS, openMigrated } from './sql-backends';

jest.setTimeout(60_000);

describe.each(SQL_BACKENDS)('shadow tallies on %s', (_name, backend) => {
  let sql: SqlClient;
  beforeAll(async () => {
    sql = await openMigrated(backend);
  });
  afterAll(() => backend.dispose(sql));

  it('adds deltas from two replicas per pair, maps key by key', async () => {
    const pair = { tenant: 'acme', activeVersion: 3, candidateVersion: 2 };
    await shadowTalliesRepository.add(sql, [
      {
        ...pair,
        ...shadowCounts({
          sampled: 5,
          evaluated: 4,
          dropped: { queue_full: 1 },
          tokensBefore: 1000,
          tokensAfterActive: 900,
          tokensAfterCandidate: 600,
          actedActive: { format: 4 },
          actedCandidate: { format: 4, dedup: 2 },
        }),
      },
      { tenant: 'other', activeVersion: 1, candidateVersion: 2, ...shadowCounts({ sampled: 1, dropped: { busy: 1 } }) },
    ]);
    await shadowTalliesRepository.add(sql, [
      {
        ...pair,
        ...shadowCounts({
          sampled: 3,
          evaluated: 1,
          dropped: { queue_full: 1, busy: 1 },
          tokensBefore: 10,
          tokensAfterActive: 9,
          tokensAfterCandidate: 6,
          actedCandidate: { mask: 1 },
        }),
      },
    ]);
    const [t] = await shadowTalliesRepository.list(sql, 'acme');
    expect(t).toMatchObject({
      ...pair,
      sampled: 8,
      evaluated: 5,
      dropped: { queue_full: 2, busy: 1 },
      tokensBefore: 1010,
      tokensAfterActive: 909,
      tokensAfterCandidate: 606,
      actedActive: { format: 4 },
      actedCandidate: { format: 4, dedup: 2, mask: 1 },
    });
    expect(t!.updatedAt.getTime()).toBeGreaterThanOrEqual(t!.firstAt.getTime());
    expect((await shadowTalliesRepository.list(sql, 'other')).map((x) => x.dropped)).toEqual([{ busy: 1 }]);
  });

  it('keeps only the newest pairs of a tenant', async () => {
    for (let v = 1; v <= 4; v++) {
      await shadowTalliesRepository.add(
        sql,
        [{ tenant: 'many', activeVersion: v, candidateVersion: v + 10, ...shadowCounts({ sampled: 1 }) }],
        2,
      );
    }
    expect((await shadowTalliesRepository.list(sql, 'many')).map((x) => x.activeVersion)).toEqual([4, 3]);
    expect(await shadowTalliesRepository.list(sql, 'acme')).toHaveLength(1);
  });
});
