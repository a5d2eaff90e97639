// The sole writer's turn rows: a flush leaves out a turn write that would only slide a stored row's
// `at` within the slack, and writes everything else (another count, TTL or rewrites; past the slack;
// rewrites of a turn it left out that the stored row does not have).
import { TURN_AT_SLACK_MS, TurnCoalescer } from '../../../libs/storage/src/turn-coalescer';
import type { TurnWrite } from '../../../libs/storage/src/sql/durable.store';

const at0 = 1_800_000_000_000;
const turn = (n: number, at: number, rewritten?: number[], ttlMs = 300_000): TurnWrite => ({
  tenant: 't',
  session: 's',
  turn: { n, at, ttlMs },
  ...(rewritten ? { rewritten } : {}),
});

function stored(c: TurnCoalescer, w: TurnWrite): TurnWrite[] {
  const out = c.needed([w]);
  c.written(out);
  return out;
}

describe('TurnCoalescer', () => {
  it('leaves out a replay that only slides at, until the slack has passed', () => {
    const c = new TurnCoalescer();
    expect(stored(c, turn(5, at0, [1, 2]))).toHaveLength(1);
    expect(stored(c, turn(5, at0 + 100, [1, 2]))).toEqual([]);
    expect(stored(c, turn(5, at0 + TURN_AT_SLACK_MS - 1, [1, 2]))).toEqual([]);
    expect(stored(c, turn(5, at0 + TURN_AT_SLACK_MS, [1, 2]))).toHaveLength(1);
    // The slack counts from the row as stored, not from the last turn left out.
    expect(stored(c, turn(5, at0 + 2 * TURN_AT_SLACK_MS - 1, [1, 2]))).toEqual([]);
  });

  it('writes a turn that changes the row', () => {
    const c = new TurnCoalescer();
    stored(c, turn(5, at0, [1, 2]));
    expect(stored(c, turn(6, at0 + 1, [1, 2]))).toHaveLength(1);
    expect(stored(c, turn(6, at0 + 2, [1]))).toHaveLength(1);
    expect(stored(c, turn(6, at0 + 3))).toHaveLength(1); // no rewrites: the row's become none
    expect(stored(c, turn(6, at0 + 4, [], 3_600_000))).toHaveLength(1); // a wider TTL
    expect(stored(c, turn(6, at0 + 5, [], 300_000))).toEqual([]); // the row keeps the wider one
    expect(stored(c, turn(6, at0 - 1, []))).toHaveLength(1); // an earlier turn: the database decides
  });

  it('writes rewrites of a turn it left out with that turn, unless the row has them', () => {
    const c = new TurnCoalescer();
    stored(c, turn(5, at0, []));
    expect(stored(c, turn(5, at0 + 10))).toEqual([]);
    const rewrites = (rewritten: number[], at: number): TurnWrite => ({ tenant: 't', session: 's', rewritten, at });
    expect(stored(c, rewrites([], at0 + 10))).toEqual([]);
    expect(stored(c, rewrites([3], at0 + 10))).toEqual([
      { tenant: 't', session: 's', turn: { n: 5, at: at0 + 10, ttlMs: 300_000 }, rewritten: [3] },
    ]);
    // Rewrites of the stored turn itself go out as they are.
    expect(stored(c, rewrites([4], at0 + 10))).toEqual([rewrites([4], at0 + 10)]);
  });

  it('keeps sessions apart', () => {
    const c = new TurnCoalescer();
    stored(c, turn(5, at0, [1]));
    expect(stored(c, { ...turn(5, at0 + 1, [1]), session: 'other' })).toHaveLength(1);
  });
});
