import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pipeline, SUMMARY_SENTINEL, contentKey, frozenSlot, stashId, type Message } from '@context-guru/components';
import { failedRunComponent, isFailureBearing, isRunLike, supersededText } from '../../../libs/components/src/offload/failed-run.component';
import { testCtx } from '../../support/ctx';
import { FIXTURE_ROOT } from '../../support/fixtures';

const make = (raw?: unknown) => failedRunComponent.create(failedRunComponent.options(raw, 'components.failed_run'));

const CARGO_RED = `running 3 tests
test tests::parses_plain ... ok
test tests::accepts_colon_prefix ... FAILED
test tests::rejects_out_of_range ... ok

failures:

---- tests::accepts_colon_prefix stdout ----

thread 'tests::accepts_colon_prefix' (929) panicked at src/lib.rs:13:33:
assertion \`left == right\` failed
  left: None
 right: Some(8080)

failures:
    tests::accepts_colon_prefix

test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
error: test failed, to rerun pass \`--lib\``;

const MAVEN_RED = `[INFO] Results:
[ERROR] Failures:
[ERROR]   LedgerServiceTest.closesPeriod:88 expected:<CLOSED> but was:<OPEN>
[ERROR] Tests run: 42, Failures: 1, Errors: 0, Skipped: 0
BUILD FAILURE`;

const NPM_RED = `npm ERR! code ELIFECYCLE
npm ERR! errno 1
npm ERR! slugify-lite@1.2.0 test: \`jest\`
npm ERR! Exit status 1`;

const PYTEST_GREEN = '============================== 9 passed in 0.62s ===============================';

const fixture = (name: string): Message[] =>
  JSON.parse(readFileSync(join(FIXTURE_ROOT, 'failed_run', name, 'input.json'), 'utf8')).messages;

describe('failed_run', () => {
  it.each([
    ['cargo test', CARGO_RED],
    ['maven', MAVEN_RED],
    ['npm (legacy ERR! lines)', NPM_RED],
  ])('recognises a failing %s run', (_label, text) => {
    expect(isRunLike(text)).toBe(true);
    expect(isFailureBearing(text)).toBe(true);
  });

  it('recognises a green run as run-like but not failure-bearing', () => {
    expect(isRunLike(PYTEST_GREEN)).toBe(true);
    expect(isFailureBearing(PYTEST_GREEN)).toBe(false);
    expect(isFailureBearing('test result: ok. 3 passed; 0 failed; 0 ignored')).toBe(false);
  });

  it('does not treat source code or prose as a run', () => {
    const source = 'def parse_currency(text):\n    """Fail loudly on bad input."""\n    return Decimal(text)\n';
    expect(isRunLike(source)).toBe(false);
    // Case matters for the FAILED banner: the word in prose does not make a failure.
    expect(isFailureBearing('The job failed twice last week, then recovered.')).toBe(false);
  });

  it('freezes each collapse and replays it byte-identically once the run sits in the cached prefix', async () => {
    const messages = fixture('collapses-earlier-failed-runs');
    const first = testCtx();
    const turn1 = await new Pipeline([make()]).run(messages, first);
    expect(first.state.newFrozen.size).toBe(2);

    // Next turn: everything up to the newest run is cached; only replay may touch it.
    const second = testCtx({
      cache: { aware: true, maxCachedIdx: messages.length - 2, cold: false },
      snapshot: { frozen: new Map(first.state.newFrozen) },
    });
    const turn2 = await new Pipeline([make()]).run(messages, second);
    expect(turn2.messages).toEqual(turn1.messages);
    expect(second.state.hits).toBe(2);
    // Replay stashes the originals again so the markers it re-emits still resolve.
    expect([...second.stash.entries.keys()].sort()).toEqual([...first.stash.entries.keys()].sort());
  });

  it('keeps the newest run in full even when an earlier identical run was collapsed', async () => {
    const red = `${CARGO_RED}\n`.repeat(2);
    const messages: Message[] = [
      { role: 'user', content: 'Make cargo test pass.' },
      { role: 'tool', tool_call_id: 'a', content: red },
      { role: 'tool', tool_call_id: 'b', content: PYTEST_GREEN.repeat(3) },
      { role: 'tool', tool_call_id: 'c', content: red },
    ];
    const frozen = new Map([[frozenSlot('failed_run', contentKey(red)), supersededText(`<<cg:${stashId(red)}>>`)]]);
    const result = await new Pipeline([make()]).run(messages, testCtx({ snapshot: { frozen } }));
    expect(result.messages[1]!.content).toBe(supersededText(`<<cg:${stashId(red)}>>`));
    expect(result.messages[3]!.content).toBe(red);
  });

  it('writes the bare sentinel in summary mode and reports the drop as irreversible', async () => {
    const ctx = testCtx();
    const result = await new Pipeline([make({ marker_mode: 'summary' })]).run(fixture('collapses-earlier-failed-runs'), ctx);
    expect(result.messages[3]!.content).toBe(`[superseded by a later run] ${SUMMARY_SENTINEL}`);
    expect(result.reports[0]!.irreversible).toBe(true);
    expect(ctx.stash.entries.size).toBe(0);
  });

  it('emits no marker when the store cannot keep the original', async () => {
    const ctx = testCtx({ persistent: false });
    const result = await new Pipeline([make()]).run(fixture('collapses-earlier-failed-runs'), ctx);
    expect(result.messages[3]!.content).toBe('[superseded by a later run]');
    expect(result.reports[0]!.reverted).toBe(false);
  });

  it('rejects an unknown marker_mode naming the key', () => {
    expect(() => make({ marker_mode: 'verbose' })).toThrow('components.failed_run.marker_mode');
  });
});
