// The replica's runtime cache: key hash → tenant → TenantRuntime, all in memory, so a request
// resolves without a round trip. It only changes through apply(), which swaps in whole tenants that
// were read consistently; a failed read never reaches it, so the last applied config and keys keep
// serving. Unknown, revoked and disabled keys get the same answer (nothing to probe for).
import { findTenantKey } from '../http/tenant-key';
import { TenantAuthError, type TenantHeaders, type TenantResolver } from './tenant-resolver';
import { DEFAULT_TENANT, type TenantRuntime } from '@context-guru/engine';

export interface TenantEntry {
  runtime: TenantRuntime;
  disabled: boolean;
  /** SHA-256 (hex) of the tenant's keys that are not revoked. */
  keyHashes: readonly string[];
  /** The generation stamp of the tenant row this entry was read at. */
  generation: number;
}

export interface DirectoryOptions {
  /** The PRESET / CONFIG runtime: tenant `default` unless the control plane defines one. */
  fallback: TenantRuntime;
  /** REQUIRE_TENANT_KEY: a request without a key is refused instead of served as `default`. */
  requireKey: boolean;
}

const REFUSED = 'unknown, revoked or disabled tenant key';
const NONE: ReadonlySet<string> = new Set();

export class TenantDirectory implements TenantResolver {
  private readonly byHash = new Map<string, string>();
  private readonly entries = new Map<string, TenantEntry>();
  /** Keys per tenant that stopped working since the last drain (revoked, or the tenant disabled). */
  private readonly revoked = new Map<string, number>();

  constructor(private readonly o: DirectoryOptions) {}

  resolve(headers: TenantHeaders): TenantRuntime {
    const found = findTenantKey(headers);
    if (found.kind === 'conflict') throw new TenantAuthError('tenant_auth', 'conflicting tenant keys in one request');
    if (found.kind === 'none') {
      if (this.o.requireKey) throw new TenantAuthError('tenant_auth', 'a tenant key is required (x-context-guru-key: cg_live_…)');
      const own = this.entries.get(DEFAULT_TENANT);
      if (!own) return this.o.fallback;
      if (own.disabled) throw new TenantAuthError('tenant_auth', 'the default tenant is disabled');
      return own.runtime;
    }
    const id = this.byHash.get(found.hash);
    const entry = id === undefined ? undefined : this.entries.get(id);
    if (!entry || entry.disabled) throw new TenantAuthError('tenant_auth', REFUSED);
    return entry.runtime;
  }

  /** Every runtime this replica serves (the fallback only while no control-plane `default` exists). */
  all(): TenantRuntime[] {
    const out = [...this.entries.values()].map((e) => e.runtime);
    if (!this.entries.has(DEFAULT_TENANT)) out.unshift(this.o.fallback);
    return out;
  }

  entry(id: string): TenantEntry | undefined {
    return this.entries.get(id);
  }

  /** tenant → active config version, for the heartbeat (the fallback reports its own). */
  versions(): Record<string, number> {
    const out: Record<string, number> = {};
    if (!this.entries.has(DEFAULT_TENANT)) out[DEFAULT_TENANT] = this.o.fallback.configVersion;
    for (const [id, e] of this.entries) out[id] = e.runtime.configVersion;
    return out;
  }

  /** Replaces whole tenants and drops the ones that no longer exist; synchronous, so atomic. */
  apply(changed: ReadonlyMap<string, TenantEntry>, existing?: ReadonlySet<string>): void {
    for (const [id, entry] of changed) {
      this.countRevoked(id, entry.disabled ? NONE : new Set(entry.keyHashes));
      this.forget(id);
      this.entries.set(id, entry);
      for (const h of entry.keyHashes) this.byHash.set(h, id);
    }
    if (existing) {
      for (const id of [...this.entries.keys()]) {
        if (existing.has(id)) continue;
        this.countRevoked(id, NONE);
        this.forget(id);
      }
    }
  }

  /** Revocations applied since the last call, per tenant (for cg_tenant_key_revocations_total). */
  drainRevocations(): Map<string, number> {
    const out = new Map(this.revoked);
    this.revoked.clear();
    return out;
  }

  /** `kept`: the key hashes that still work after the change. */
  private countRevoked(id: string, kept: ReadonlySet<string>): void {
    const old = this.entries.get(id);
    if (!old || old.disabled) return;
    const n = old.keyHashes.filter((h) => !kept.has(h)).length;
    if (n > 0) this.revoked.set(id, (this.revoked.get(id) ?? 0) + n);
  }

  private forget(id: string): void {
    const old = this.entries.get(id);
    if (!old) return;
    for (const h of old.keyHashes) if (this.byHash.get(h) === id) this.byHash.delete(h);
    this.entries.delete(id);
  }
}
