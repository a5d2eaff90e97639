// The embedded database runs with the small memory settings its client sets: shared buffers are
// resident in full from boot in PGlite's linear memory (16MB of them held 29 MB, 4MB 17 MB), so
// they are sized for the laptop default's RSS bound (bench/README.md, memory); so are the connection
// and replication counts PostgreSQL sizes its shared memory by (one session, nothing replicates).
import { PgliteSqlClient } from '@context-guru/storage';

test('the embedded database runs with 4MB of shared buffers, small work memory and one session of room', async () => {
  const db = await PgliteSqlClient.open();
  try {
    const settings = await db.query<{ name: string; setting: string }>(
      `SELECT name, current_setting(name) AS setting FROM unnest($1::text[]) AS name ORDER BY name`,
      [
        [
          'autovacuum_max_workers',
          'maintenance_work_mem',
          'max_connections',
          'max_replication_slots',
          'max_wal_senders',
          'shared_buffers',
          'temp_buffers',
          'wal_buffers',
          'work_mem',
        ],
      ],
    );
    expect(Object.fromEntries(settings.map((r) => [r.name, r.setting]))).toEqual({
      autovacuum_max_workers: '1',
      maintenance_work_mem: '8MB',
      max_connections: '2',
      max_replication_slots: '0',
      max_wal_senders: '0',
      shared_buffers: '4MB',
      temp_buffers: '2MB',
      wal_buffers: '1MB',
      work_mem: '2MB',
    });
  } finally {
    await db.close();
  }
}, 120_000);
