// Thirty-one simulated days against the real Postgres (a database of its own), with an injectable
// clock: every day two stores (two replicas) write a day of sessions — turn records, frozen
// decisions, flags, kept marks and archived originals, sealed as in production, the originals
// being the tool outputs of the real corpus (bench/corpus-real) — while both run the retention
// round (partition maintenance, then the batched purge) concurrently with the writes. Once
// retention is reached, rows and pg_total_relation_size of every session table must stay within
// the budget stated below, and stop growing; the figures are printed (docs/storage.md#retention).
//
// Scaled down to run in well under a minute: 24 sessions a day instead of 1,000, and 7 days of
// retention instead of 30, so the steady state is reached on day 8 and held for 23 more days.
// Autovacuum's part for the tables purged by DELETE is played by a plain VACUUM after each day
// (a day lasts about a second here; autovacuum wakes once a minute).
import { randomBytes, createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DurableStore, KeyRing, LocalKeyProvider, migrate, PgSqlClient, SqlDataKeyStore } from '@context-guru/storage';
import { freshDatabase, type FreshDatabase } from '../../support/fresh-database';

jest.setTimeout(180_000);

const DAY = 86_400_000;
const DAYS = 31;
const RETENTION_DAYS = 7;
const SESSIONS_PER_DAY = 24;
/** One session in ten carries on into the next day (its keys get a row in two days' partitions). */
const CARRIED_OVER = 0.1;
/** Tool outputs at least this long are offloaded: archived, with a frozen marker in their place. */
const OFFLOAD_CHARS = 1000;
/** Turns flushed together (the write-behind queue batches a session's turns the same way). */
const TURNS_PER_FLUSH = 6;
const T0 = Date.UTC(2026, 0, 1);

/**
 * The budget once retention is reached: rows at most (retention + 2 days) of what a day writes,
 * and bytes at most this, per table (8 kB pages, indexes and TOAST included).
 */
const BYTES_BUDGET: Record<string, number> = {
  stash_archive: 16 << 20,
  session_checkpoint: 2 << 20,
  session_turn: 1 << 20,
  ownership: 1 << 20,
  session_state: 512 << 10,
  kept: 256 << 10,
  stash_bytes: 256 << 10,
};
const TABLES = Object.keys(BYTES_BUDGET);

/** The tool outputs of each real session, in order (what an agent's session stashes). */
function corpusSessions(): Array<{ turns: number; outputs: string[] }> {
  const dir = join(__dirname, '..', '..', '..', 'bench', 'corpus-real');
  return readdirSync(dir)
    .filter((f) => f.startsWith('real-') && f.endsWith('.json'))
    .sort()
    .map((f) => {
      const s = JSON.parse(readFileSync(join(dir, f), 'utf8')) as {
        stats: { requests: number };
        formats: { anthropic: { messages: Array<{ content: unknown }> } };
      };
      const outputs: string[] = [];
      for (const m of s.formats.anthropic.messages) {
        if (!Array.isArray(m.content)) continue;
        for (const part of m.content as Array<{ type?: string; content?: unknown }>) {
          if (part.type !== 'tool_result') continue;
          const text = typeof part.content === 'string' ? part.content : JSON.stringify(part.content);
          outputs.push(text);
        }
      }
      return { turns: s.stats.requests, outputs };
    });
}

const hex = (s: string, n: number) => createHash('sha256').update(s).digest('hex').slice(0, n);

let db: FreshDatabase;
let sql: PgSqlClient;
let other: PgSqlClient;
const clock = { t: T0 };

beforeAll(async () => {
  db = await freshDatabase('retention_month');
  sql = new PgSqlClient({ connectionString: db.url, max: 4 });
  other = new PgSqlClient({ connectionString: db.url, max: 4 });
  await migrate(sql);
});

afterAll(async () => {
  await other?.close();
  await sql?.close();
  await db?.drop();
});

interface Figures {
  rows: number;
  bytes: number;
}

async function measure(): Promise<Record<string, Figures>> {
  const out: Record<string, Figures> = {};
  for (const t of TABLES) {
    const [r] = await sql.query(
      `SELECT (SELECT count(*) FROM ${t})::int AS rows,
              CASE WHEN (SELECT relkind FROM pg_class WHERE oid = $1::regclass) = 'p'
                THEN (SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree($1::regclass))
                ELSE pg_total_relation_size($1::regclass) END::bigint AS bytes`,
      [t],
    );
    out[t] = { rows: r!.rows as number, bytes: r!.bytes as number };
  }
  return out;
}

/** What one simulated day writes, per table, counted as it is written. */
type Written = Record<string, number> & { tenants: Set<string> };

/**
 * One session's life on `store`: its turns in flushes of TURNS_PER_FLUSH, each flush archiving the
 * outputs offloaded in those turns (and their ownership), freezing their markers, and writing the
 * turn record; the first flush also stores the session's flags, and one session in five has an
 * output the model expands (a kept mark).
 */
async function runSession(store: DurableStore, name: string, spec: { turns: number; outputs: string[] }, w: Written): Promise<void> {
  const tenant = `tenant-${name.length % 3}`;
  const perTurn = Math.max(1, Math.ceil(spec.outputs.length / spec.turns));
  for (let first = 0; first < spec.turns; first += TURNS_PER_FLUSH) {
    const last = Math.min(spec.turns, first + TURNS_PER_FLUSH);
    const outputs = spec.outputs.slice(first * perTurn, last * perTurn).filter((o) => o.length >= OFFLOAD_CHARS);
    const ids = outputs.map((o, i) => hex(`${name}:${first}:${i}:${o.length}`, 16));
    if (outputs.length > 0) {
      await store.archiveStash(outputs.map((text, i) => ({ tenant, session: name, id: ids[i]!, text })));
      if (!w.tenants.has(tenant)) w.stash_bytes! += 1; // the tenant's byte counter of the day
      w.tenants.add(tenant);
      w.stash_archive! += outputs.length;
      w.ownership! += outputs.length;
    }
    const frozen = new Map(
      outputs.map((o, i) => [
        `mask:${hex(o, 24)}`,
        `[masked ${o.split('\n').length} lines] <<cg:${ids[i]}>> [full output: call context_guru_expand]\n`,
      ]),
    );
    await store.saveCheckpoints([
      { tenant, session: name, frozen, offloaded: outputs.length > 0, arm: first === 0 ? 'treated' : undefined },
    ]);
    w.session_checkpoint! += frozen.size;
    if (first === 0) w.session_state! += 1;
    await store.saveTurns([{ tenant, session: name, turn: { n: last, at: clock.t, ttlMs: 300_000 }, rewritten: [last - 1] }]);
    if (first === 0) w.session_turn! += 1;
    if (first === 0 && name.endsWith('0') && outputs[0]) {
      await store.markKept(tenant, [hex(outputs[0], 24)]);
      w.kept! += 1;
    }
    clock.t += 60_000;
  }
}

it(`${DAYS} simulated days stay within the stated budget per table while the purge runs under load`, async () => {
  const corpus = corpusSessions();
  const keys = new KeyRing(new LocalKeyProvider(randomBytes(32)), new SqlDataKeyStore(sql));
  const stores = [sql, other].map((c) => new DurableStore(c, { retentionDays: RETENTION_DAYS, now: () => clock.t, keys }));
  const perDay: Written[] = [];
  const history: Array<Record<string, Figures>> = [];
  const rounds = { ran: 0, skipped: 0 };
  let carried: string[] = [];
  for (let day = 0; day < DAYS; day++) {
    clock.t = T0 + day * DAY + 8 * 3_600_000;
    const w = Object.assign(Object.fromEntries(TABLES.map((t) => [t, 0])), { tenants: new Set<string>() }) as Written;
    const names = [...carried, ...Array.from({ length: SESSIONS_PER_DAY }, (_, i) => `d${day}-s${i}`)];
    carried = names.slice(carried.length, carried.length + Math.round(SESSIONS_PER_DAY * CARRIED_OVER));
    const specOf = (n: string) => corpus[createHash('sha256').update(n).digest()[0]! % corpus.length]!;
    // Two replicas write half the sessions each; both run the retention round meanwhile.
    const writers = [0, 1].map(async (k) => {
      for (const [i, name] of names.entries()) if (i % 2 === k) await runSession(stores[k]!, name, specOf(name), w);
    });
    const purges = stores.map(async (s, k) => {
      await new Promise((r) => setTimeout(r, 5 + 10 * k));
      const r = await s.retentionRound();
      rounds[r ? 'ran' : 'skipped']++;
    });
    await Promise.all([...writers, ...purges]);
    await sql.exec('VACUUM ownership, session_state, kept, stash_bytes');
    perDay.push(w);
    history.push(await measure());
  }

  const rows = (t: string) => history.map((h) => h[t]!.rows);
  const bytes = (t: string) => history.map((h) => h[t]!.bytes);
  const mb = (n: number) => (n / 1048576).toFixed(2);
  const maxDay = (t: string) => Math.max(...perDay.map((w) => w[t]!));
  const steady = RETENTION_DAYS + 2; // from this day on, retention has taken its first full day
  const report = TABLES.map((t) => {
    const r = rows(t).slice(steady);
    const b = bytes(t).slice(steady);
    return `${t.padEnd(20)} rows ${String(Math.min(...r)).padStart(6)}–${String(Math.max(...r)).padEnd(6)} (budget ${(RETENTION_DAYS + 2) * maxDay(t)})  size ${mb(Math.min(...b))}–${mb(Math.max(...b))} MB (budget ${mb(BYTES_BUDGET[t]!)})  day ${DAYS}: ${mb(bytes(t)[DAYS - 1]!)} MB`;
  });
  // Per session held (a written-day table holds retention + 1 days of sessions), scaled to the
  // issue's 1,000 sessions a day kept 30 days: what these figures say a month of that costs.
  const held = SESSIONS_PER_DAY * (RETENTION_DAYS + 1);
  // (stash_bytes is one row per tenant and day, whatever the sessions: not scaled.)
  const month = TABLES.filter((t) => t !== 'stash_bytes')
    .map((t) => `${t} ${mb((bytes(t)[DAYS - 1]! / held) * 1000 * 31)} MB`)
    .join(', ');
  const written = TABLES.map((t) => `${t} ${perDay.reduce((s, w) => s + w[t]!, 0)}`).join(', ');
  process.stdout.write(
    `\nretention month: ${DAYS} days, ${SESSIONS_PER_DAY} sessions/day, ${RETENTION_DAYS}-day retention; rounds ran ${rounds.ran}, skipped ${rounds.skipped}\n` +
      `rows written over the month: ${written}\nafter day ${steady + 1} (min–max over the days):\n${report.join('\n')}\n` +
      `scaled to 1,000 sessions/day and 30-day retention: ${month}\n`,
  );

  // Every day's partitions were there: nothing waited in a DEFAULT partition at the end of a day.
  const [left] = await sql.query(
    'SELECT (SELECT count(*) FROM stash_archive_default) + (SELECT count(*) FROM session_checkpoint_default) + (SELECT count(*) FROM session_turn_default) AS n',
  );
  expect(left!.n).toBe(0);
  for (const t of TABLES) {
    for (const [day, h] of history.entries()) {
      if (day < steady) continue;
      expect([t, day, h[t]!.rows <= (RETENTION_DAYS + 2) * maxDay(t)]).toEqual([t, day, true]);
      expect([t, day, h[t]!.bytes <= BYTES_BUDGET[t]!]).toEqual([t, day, true]);
    }
  }
  // Bounded, not merely under a large budget: the last day is no larger than a quarter above the
  // first steady day for the partitioned tables, whose space is handed back when a day is dropped.
  for (const t of ['stash_archive', 'session_checkpoint', 'session_turn']) {
    expect([t, bytes(t)[DAYS - 1]! <= 1.25 * bytes(t)[steady]!]).toEqual([t, true]);
    // … while over the month they received several times what they hold now.
    expect([t, perDay.reduce((s, w) => s + w[t]!, 0) >= 3 * rows(t)[DAYS - 1]!]).toEqual([t, true]);
  }
});
