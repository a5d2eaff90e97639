// The control plane's database restored from a backup under a running replica: its generation
// goes back below the one the replica applied (and its tables are new), so a change made after the
// restore — a key revocation here — would be ignored as old news. The replica sees the restore on
// its next poll and reloads every tenant: the revoked key is refused within the propagation bound.
// Real processes: pg_dump / pg_restore against the seed's database, a gateway process, Redis.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createControlSeed, type ControlSeed } from '../../support/control-seed';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream';
import { startPrivateRedis, startReplica, type PrivateRedis, type Replica } from '../../support/replicas';
import { jsonScript } from '../../support/scripted-model';
import { postTurn, readyz, waitGeneration } from '../../support/tenant-replicas';
import { agentSteps, openaiTurn } from '../../support/transcripts';

jest.setTimeout(120_000);

const run = promisify(execFile);
/** What the poll (500 ms) and a reload take at most here: a refusal later than this is a failure. */
const PROPAGATION_BOUND_MS = 10_000;

let seed: ControlSeed;
let redis: PrivateRedis;
let upstream: FakeUpstream;
let replica: Replica;
let dir: string;
const keys: Record<string, { id: string; key: string }> = {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cg-restore-'));
  redis = await startPrivateRedis();
  seed = await createControlSeed('restore', redis.url);
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  await seed.createTenant('a', { preset: 'agent' });
  keys.one = await seed.issueKey('a');
  keys.two = await seed.issueKey('a');
  replica = await startReplica({
    REDIS_URL: redis.url,
    DATABASE_URL: seed.dbUrl,
    OPENAI_UPSTREAM: upstream.url,
    ANTHROPIC_UPSTREAM: upstream.url,
    REQUIRE_TENANT_KEY: 'true',
  });
});

afterAll(async () => {
  await replica?.stop();
  await upstream?.close();
  await seed?.close();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const RESET_SCHEMA = 'DROP SCHEMA public CASCADE; CREATE SCHEMA public;';
const steps = agentSteps(3, 5);
const statusWith = async (key: string) => (await postTurn(replica, 'openai', openaiTurn(steps, 1), { 'x-context-guru-key': key })).status;

it('after a restore, a key revoked in the restored database is refused within the propagation bound', async () => {
  expect(await statusWith(keys.two!.key)).toBe(200);
  const dump = join(dir, 'control.dump');
  await run('pg_dump', ['--format=custom', `--file=${dump}`, seed.dbUrl]);
  // Admin changes after the backup: the replica applies a higher generation than the dump holds.
  let applied = 0;
  for (const preset of ['safe', 'agent', 'safe'] as const) applied = (await seed.pushConfig('a', { preset })).generation;
  await waitGeneration(replica, applied);

  // As docs/storage.md says to restore (pg_restore --clean cannot drop a day partition's
  // inherited key): the schema replaced by the dump's in one transaction.
  const script = join(dir, 'restore.sql');
  await run('pg_restore', [`--file=${script}`, dump]);
  await run('psql', ['-v', 'ON_ERROR_STOP=1', '-q', '--single-transaction', '-c', RESET_SCHEMA, '-f', script, seed.dbUrl]);
  const revoked = await seed.revokeKey('a', keys.two!.id);
  expect(revoked).toBeLessThan(applied);

  const started = Date.now();
  let status = await statusWith(keys.two!.key);
  while (status !== 401 && Date.now() - started < PROPAGATION_BOUND_MS) {
    await new Promise((r) => setTimeout(r, 100));
    status = await statusWith(keys.two!.key);
  }
  expect(status).toBe(401);
  expect(await statusWith(keys.one!.key)).toBe(200);
  const { body } = await readyz(replica);
  expect(body.control?.generation).toBe(revoked);
  console.log(`restore: the revoked key was refused ${Date.now() - started} ms after the revocation`);
});
