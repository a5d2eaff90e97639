import { hashKey } from '@context-guru/storage';
import { TenantDirectory, type TenantEntry } from '../../../apps/gateway/src/tenancy/tenant-directory';
import { TenantLabels } from '../../../apps/gateway/src/observability/tenant-label';
import { TenantAuthError } from '../../../apps/gateway/src/tenancy/tenant-resolver';
import { createTenantRuntime } from '../../../libs/engine/src/tenancy/tenant-runtime';

const fallback = createTenantRuntime('default', { preset: 'safe' }, 1);
const A = 'cg_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const B = 'cg_live_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';

function entry(id: string, keys: string[], disabled = false, preset = 'balanced'): TenantEntry {
  return { runtime: createTenantRuntime(id, { preset }, 1), disabled, keyHashes: keys.map(hashKey), generation: 1 };
}

function refused(d: TenantDirectory, headers: Record<string, string>): number | undefined {
  try {
    d.resolve(headers);
    return undefined;
  } catch (err) {
    return err instanceof TenantAuthError ? err.status : -1;
  }
}

describe('tenant directory', () => {
  it('resolves a key to its tenant and refuses unknown keys', () => {
    const d = new TenantDirectory({ fallback, requireKey: false });
    d.apply(new Map([['a', entry('a', [A])]]));
    expect(d.resolve({ 'x-context-guru-key': A }).id).toBe('a');
    expect(refused(d, { 'x-context-guru-key': B })).toBe(401);
  });

  it('no key is the PRESET/CONFIG default, or the control plane default when it exists', () => {
    const d = new TenantDirectory({ fallback, requireKey: false });
    expect(d.resolve({})).toBe(fallback);
    d.apply(new Map([['default', entry('default', [])]]));
    expect(d.resolve({}).built.preset).toBe('balanced');
    d.apply(new Map([['default', entry('default', [], true)]]));
    expect(refused(d, {})).toBe(401);
  });

  it('REQUIRE_TENANT_KEY refuses a request without a key', () => {
    const d = new TenantDirectory({ fallback, requireKey: true });
    expect(refused(d, {})).toBe(401);
  });

  it('a revoked key and a disabled tenant are refused; other tenants are untouched', () => {
    const d = new TenantDirectory({ fallback, requireKey: false });
    d.apply(
      new Map([
        ['a', entry('a', [A])],
        ['b', entry('b', [B])],
      ]),
    );
    d.apply(new Map([['a', entry('a', [])]]));
    expect(refused(d, { 'x-context-guru-key': A })).toBe(401);
    expect(d.resolve({ 'x-context-guru-key': B }).id).toBe('b');
    d.apply(new Map([['b', entry('b', [B], true)]]));
    expect(refused(d, { 'x-context-guru-key': B })).toBe(401);
  });

  it('a tenant that no longer exists drops out with its keys', () => {
    const d = new TenantDirectory({ fallback, requireKey: false });
    d.apply(new Map([['a', entry('a', [A])]]));
    d.apply(new Map(), new Set());
    expect(refused(d, { 'x-context-guru-key': A })).toBe(401);
    expect(d.versions()).toEqual({ default: 1 });
  });
});

describe('tenant key revocations', () => {
  it('counts the keys that stopped working per tenant: revoked, tenant disabled, tenant gone — once each', () => {
    const d = new TenantDirectory({ fallback, requireKey: false });
    d.apply(
      new Map([
        ['a', entry('a', [A, B])],
        ['b', entry('b', [B.replace('B', 'C')])],
        ['c', entry('c', [A.replace('A', 'D')])],
      ]),
    );
    expect(d.drainRevocations()).toEqual(new Map());
    d.apply(
      new Map([
        ['a', entry('a', [A])],
        ['b', entry('b', [B.replace('B', 'C')], true)],
      ]),
    );
    expect(d.drainRevocations()).toEqual(
      new Map([
        ['a', 1],
        ['b', 1],
      ]),
    );
    d.apply(new Map([['b', entry('b', [B.replace('B', 'C')], true)]]), new Set(['a', 'b']));
    expect(d.drainRevocations()).toEqual(new Map([['c', 1]]));
    expect(d.drainRevocations()).toEqual(new Map());
  });
});

describe('tenant metric label', () => {
  it('keeps the first cap tenants (default always) and folds the rest into other', () => {
    const l = new TenantLabels(3);
    expect(['default', 'a', 'b', 'c', 'a', 'default'].map((t) => l.label(t))).toEqual(['default', 'a', 'b', 'other', 'a', 'default']);
  });
});
