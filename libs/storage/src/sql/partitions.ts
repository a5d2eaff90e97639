// Day partitions of the partitioned session tables (retention-registry.ts). Each round, per table:
// drops the partitions whose every row is past retention (the files go back at once: no DELETE,
// no dead tuples, nothing for vacuum), then creates the partitions writes will need up to
// AHEAD_DAYS ahead and empties the DEFAULT partition — rows written while their day had no
// partition yet, and rows from before migration 0013 — into day partitions. Every step is a
// transaction that first tries a transaction-level advisory lock, so every replica may run the
// timer, one does the work, and it holds through a transaction-pooling PgBouncer.
import { emptyPurgeResult, PARTITIONED, type PurgeResult } from './retention-registry';
import { col, type SqlClient, type SqlQueryable } from './sql-client';
import { utcDay } from './stash-bytes';

/** Days of partitions created ahead of the day writes land in now: a stalled maintenance has this long. */
const AHEAD_DAYS = 2;
/** First key of the advisory lock ("pa"rtitions); the second is the schema's, as the migrations' lock. */
const LOCK_CLASS = 0x7061;
const DAY_MS = 86_400_000;
/** A DDL statement queued for a lock queues every writer behind it: give up instead, retry next round. */
const LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'";

export interface PartitionRound {
  created: number;
  dropped: number;
  /** Rows moved out of a DEFAULT partition into their day's. */
  moved: number;
  /** Rows that went with dropped partitions (or past-retention rows of a DEFAULT one), per purge key. */
  rows: PurgeResult;
}

const addDays = (day: string, n: number) => utcDay(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS);
const partitionName = (table: string, day: string) => `${table}_p${day.replaceAll('-', '')}`;
const PARTITION_RE = /_p(\d{4})(\d{2})(\d{2})$/;

/**
 * Runs a write again once when it met a partition being created: a row routed to the DEFAULT
 * partition just before its day's partition was attached is refused (check_violation) and, run
 * again, lands in the new partition. Only a write of a day that had no partition can meet this.
 */
export async function retriedOnPartitionRace<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown } | null;
    if (e?.code !== '23514' || typeof e.message !== 'string' || !e.message.includes('partition constraint')) throw err;
    return write();
  }
}

/** One maintenance round over every partitioned table; undefined when another replica holds it. */
export async function maintainPartitions(sql: SqlClient, nowMs: number, retentionMs: number): Promise<PartitionRound | undefined> {
  const round: PartitionRound = { created: 0, dropped: 0, moved: 0, rows: emptyPurgeResult() };
  for (const t of PARTITIONED) {
    const expiry = t.day === 'expiry';
    // A day partition holds keys in [day, day + 1): all past retention once day + 1 is.
    const dropBefore = expiry ? utcDay(nowMs) : utcDay(nowMs - retentionMs);
    // The key a write made now carries.
    const writing = expiry ? utcDay(nowMs + retentionMs) : utcDay(nowMs);
    for (const step of [dropExpired, createAhead]) {
      const ran = await sql.transaction(async (tx) => {
        const [lock] = await tx.query('SELECT pg_try_advisory_xact_lock($1, hashtext(current_schema())) AS got', [LOCK_CLASS]);
        if (lock?.got !== true) return false;
        await tx.exec(LOCK_TIMEOUT);
        await step(tx, { ...t, dropBefore, writing }, round);
        return true;
      });
      if (!ran) return undefined;
    }
  }
  return round;
}

interface TableStep {
  table: string;
  column: string;
  counted: keyof PurgeResult;
  /** Partitions of earlier days go. */
  dropBefore: string;
  writing: string;
}

/** The day partitions a table has now, by day. */
async function dayPartitions(tx: SqlQueryable, table: string): Promise<Map<string, string>> {
  const rows = await tx.query(
    `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass`,
    [table],
  );
  const out = new Map<string, string>();
  for (const r of rows) {
    const name = col.str(r, 'relname');
    const m = PARTITION_RE.exec(name);
    if (m) out.set(`${m[1]}-${m[2]}-${m[3]}`, name);
  }
  return out;
}

/**
 * Dropping a partition locks its parent exclusively (every writer waits for the commit), so this
 * is a transaction of its own, and it takes no other table's lock first (no deadlock with a writer).
 */
async function dropExpired(tx: SqlQueryable, t: TableStep, round: PartitionRound): Promise<void> {
  for (const [day, name] of await dayPartitions(tx, t.table)) {
    if (day >= t.dropBefore) continue;
    const [n] = await tx.query(`SELECT count(*)::int AS n FROM "${name}"`);
    await tx.exec(`DROP TABLE "${name}"`);
    round.dropped++;
    round.rows[t.counted] += n ? col.num(n, 'n') : 0;
  }
}

/**
 * Creates each missing partition from today's write day to AHEAD_DAYS after it, and one for every
 * day the DEFAULT partition holds rows of (moving them there); the DEFAULT's rows already past
 * retention are deleted. A partition is made as a plain table and attached: ATTACH locks the parent
 * less than CREATE … PARTITION OF does (writers go on), and it is where the moved rows are checked.
 */
async function createAhead(tx: SqlQueryable, t: TableStep, round: PartitionRound): Promise<void> {
  const fallback = `${t.table}_default`;
  // First, so no row lands in the DEFAULT between reading what it holds and the ATTACH that checks
  // it (a write routed there waits the few milliseconds this takes; one to a day partition does not).
  await tx.exec(`LOCK TABLE "${fallback}" IN ACCESS EXCLUSIVE MODE`);
  const have = await dayPartitions(tx, t.table);
  const held = (await tx.query(`SELECT DISTINCT ${t.column}::text AS d FROM "${fallback}"`)).map((r) => col.str(r, 'd'));
  const wanted = new Set<string>();
  for (let i = 0; i <= AHEAD_DAYS; i++) wanted.add(addDays(t.writing, i));
  for (const d of held) if (d >= t.dropBefore) wanted.add(d);
  const missing = [...wanted].filter((d) => !have.has(d)).sort();
  if (held.some((d) => d < t.dropBefore)) {
    const [n] = await tx.query(
      `WITH d AS (DELETE FROM "${fallback}" WHERE ${t.column} < $1::date RETURNING 1) SELECT count(*)::int AS n FROM d`,
      [t.dropBefore],
    );
    round.rows[t.counted] += n ? col.num(n, 'n') : 0;
  }
  for (const day of missing) {
    const name = partitionName(t.table, day);
    await tx.exec(`CREATE TABLE "${name}" (LIKE "${t.table}" INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
    if (held.includes(day)) {
      const [n] = await tx.query(
        `WITH m AS (DELETE FROM "${fallback}" WHERE ${t.column} = $1::date RETURNING *),
              i AS (INSERT INTO "${name}" SELECT * FROM m RETURNING 1)
         SELECT count(*)::int AS n FROM i`,
        [day],
      );
      round.moved += n ? col.num(n, 'n') : 0;
    }
    await tx.exec(`ALTER TABLE "${t.table}" ATTACH PARTITION "${name}" FOR VALUES FROM ('${day}') TO ('${addDays(day, 1)}')`);
    round.created++;
  }
}
