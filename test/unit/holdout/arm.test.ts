// The arm rule: a deterministic point per tenant and session, compared with the fraction; the
// recorded arm always wins; a session known before the holdout stays treated.
import { createHash } from 'node:crypto';
import { armPoint, assignArm } from '../../../libs/engine/src/session/arm';

const sessions = Array.from({ length: 10_000 }, (_, i) => `acme:session-${i}`);

describe('armPoint', () => {
  it('is the first 32 bits of SHA-256(tenant NUL session), in [0, 1), and independent of the process', () => {
    const expected = createHash('sha256').update('acme\u0000acme:s1').digest().readUInt32BE(0) / 2 ** 32;
    expect(armPoint('acme', 'acme:s1')).toBe(expected);
    expect(armPoint('acme', 'acme:s1')).toBe(armPoint('acme', 'acme:s1'));
    expect(armPoint('other', 'acme:s1')).not.toBe(armPoint('acme', 'acme:s1'));
    for (const s of sessions.slice(0, 500)) {
      const p = armPoint('acme', s);
      expect(p >= 0 && p < 1).toBe(true);
    }
  });

  it('holds out about `fraction` of new sessions, and a larger fraction holds out a superset', () => {
    const held = (f: number) => sessions.filter((s) => assignArm('acme', s, undefined, false, f).arm === 'holdout');
    const tenth = held(0.1);
    const fifth = held(0.2);
    expect(Math.abs(tenth.length / sessions.length - 0.1)).toBeLessThan(0.015);
    expect(Math.abs(fifth.length / sessions.length - 0.2)).toBeLessThan(0.015);
    expect(tenth.every((s) => fifth.includes(s))).toBe(true);
    expect(held(0)).toEqual([]);
    expect(held(1).length).toBe(sessions.length);
  });
});

describe('assignArm', () => {
  const holdoutSession = sessions.find((s) => armPoint('acme', s) < 0.2)!;

  it('records the arm of a new session of a measuring tenant', () => {
    expect(assignArm('acme', holdoutSession, undefined, false, 0.2)).toEqual({ arm: 'holdout', record: true });
    expect(assignArm('acme', holdoutSession, undefined, false, 0)).toEqual({ arm: 'treated', record: true });
  });

  it('keeps a recorded arm whatever the fraction says now, or when the holdout is gone', () => {
    expect(assignArm('acme', holdoutSession, 'treated', false, 0.2)).toEqual({ arm: 'treated', record: false });
    expect(assignArm('acme', sessions[0]!, 'holdout', true, 0)).toEqual({ arm: 'holdout', record: false });
    expect(assignArm('acme', sessions[0]!, 'holdout', true, undefined)).toEqual({ arm: 'holdout', record: false });
  });

  it('keeps a session known before the holdout treated, and records nothing for a tenant without one', () => {
    expect(assignArm('acme', holdoutSession, undefined, true, 0.2)).toEqual({ arm: 'treated', record: true });
    expect(assignArm('acme', holdoutSession, undefined, false, undefined)).toEqual({ arm: 'treated', record: false });
  });
});
