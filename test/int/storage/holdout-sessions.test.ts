// holdout_sessions on the real Postgres and on PGlite: deltas from several replicas add up per
// session and version, a session's first arm stays, and trimming keeps each version's newest
// sessions and each tenant's newest versions.
import { holdoutSessionsRepository as repo, type HoldoutSessionCost, type SqlClient } from '@context-guru/storage';
import { SQL_BACKENDS, openMigrated } from './sql-backends';

jest.setTimeout(60_000);

const cost = (o: Partial<HoldoutSessionCost> & Pick<HoldoutSessionCost, 'session'>): HoldoutSessionCost => ({
  tenant: 'acme',
  version: 1,
  arm: 'treated',
  billedUsd: 0,
  inputTokens: 0,
  turns: 0,
  ...o,
});

describe.each(SQL_BACKENDS)('holdout sessions on %s', (_name, backend) => {
  let sql: SqlClient;
  beforeAll(async () => {
    sql = await openMigrated(backend);
  });
  afterAll(() => backend.dispose(sql));

  it('adds the deltas of two replicas per session and version; the first arm stays', async () => {
    await repo.add(sql, [
      cost({ session: 's1', arm: 'holdout', billedUsd: 0.25, inputTokens: 1000, turns: 1 }),
      cost({ session: 's2', billedUsd: 0.5, inputTokens: 3000, turns: 2 }),
    ]);
    await repo.add(sql, [
      cost({ session: 's1', arm: 'treated', billedUsd: 0.125, inputTokens: 500, turns: 1 }),
      cost({ session: 's1', version: 2, arm: 'holdout', billedUsd: 1, inputTokens: 10, turns: 1 }),
      cost({ tenant: 'other', session: 's1', billedUsd: 9, inputTokens: 9, turns: 9 }),
    ]);
    expect(await repo.list(sql, 'acme', 1)).toEqual([
      cost({ session: 's1', arm: 'holdout', billedUsd: 0.375, inputTokens: 1500, turns: 2 }),
      cost({ session: 's2', billedUsd: 0.5, inputTokens: 3000, turns: 2 }),
    ]);
    expect((await repo.list(sql, 'acme')).map((r) => [r.version, r.session])).toEqual([
      [2, 's1'],
      [1, 's1'],
      [1, 's2'],
    ]);
    expect(await repo.versions(sql, 'acme')).toEqual([2, 1]);
    expect(await repo.list(sql, 'nobody')).toEqual([]);
  });

  it('trims to the newest sessions of each version and the newest versions of each tenant', async () => {
    for (let i = 0; i < 6; i++) await repo.add(sql, [cost({ tenant: 'trim', session: `s${i}`, billedUsd: i, inputTokens: 1, turns: 1 })]);
    for (const v of [2, 3, 4]) await repo.add(sql, [cost({ tenant: 'trim', version: v, session: 'x', inputTokens: 1, turns: 1 })]);
    // s0 is touched again: it is now among the newest.
    await repo.add(sql, [cost({ tenant: 'trim', session: 's0', turns: 1 })]);
    await repo.trim(sql, ['trim'], { sessions: 3, versions: 4 });
    expect((await repo.list(sql, 'trim', 1)).map((r) => r.session)).toEqual(['s0', 's4', 's5']);
    expect(await repo.versions(sql, 'trim')).toEqual([4, 3, 2, 1]);
    await repo.trim(sql, ['trim'], { sessions: 3, versions: 3 });
    expect(await repo.versions(sql, 'trim')).toEqual([4, 3, 2]);
    // Other tenants are left alone.
    expect((await repo.list(sql, 'acme', 1)).length).toBe(2);
  });
});
