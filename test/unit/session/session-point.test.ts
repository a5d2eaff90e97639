// The holdout arm and the shadow sample draw sessions with one mapping (sessionPoint) from their own
// hash inputs; the values below are what both produced before they shared it, so no existing
// session changes arm or sample.
import { createHash } from 'node:crypto';
import { armPoint } from '../../../libs/engine/src/session/arm';
import { sessionPoint } from '../../../libs/engine/src/session/session-point';
import { sessionShare } from '../../../apps/gateway/src/shadow/shadow-runner';

/** [tenant, session key, its holdout point, its shadow share]. */
const KNOWN: Array<[string, string, number, number]> = [
  ['acme', 'acme:s1', 0.19330835877917707, 0.8790557312313467],
  ['default', 'default:abc', 0.3100029337219894, 0.7823281290475279],
  ['team', 'team:7', 0.35549133317545056, 0.1830272008664906],
];

describe('sessionPoint', () => {
  it.each(KNOWN)('%s %s keeps its holdout point and shadow share', (tenant, session, arm, share) => {
    expect(armPoint(tenant, session)).toBe(arm);
    expect(sessionShare(tenant, session)).toBe(share);
  });

  it('is the first 32 bits of SHA-256 over the NUL-joined parts, over 2^32', () => {
    const digest = createHash('sha256').update('shadow\u0000acme\u0000acme:s1').digest();
    expect(sessionPoint('shadow', 'acme', 'acme:s1')).toBe(digest.readUInt32BE(0) / 2 ** 32);
    expect(sessionPoint('acme', 'acme:s1')).toBe(armPoint('acme', 'acme:s1'));
  });

  it('draws the shadow sample independently of the arm (the salt decorrelates them)', () => {
    const sessions = Array.from({ length: 4000 }, (_, i) => `acme:s-${i}`);
    const held = sessions.filter((s) => armPoint('acme', s) < 0.5);
    const sampledAmongHeld = held.filter((s) => sessionShare('acme', s) < 0.5).length / held.length;
    expect(Math.abs(sampledAmongHeld - 0.5)).toBeLessThan(0.05);
  });
});
