// Envelope encryption per tenant: each tenant (scope) has random 256-bit data keys, stored only
// wrapped by the KEK, unwrapped once per process and cached, so the request path pays one map
// read and no KMS call. From a data key HKDF derives the sealing key and, from the scope's first
// version only, the marker-id key: ids must stay byte-identical for as long as the tenant lives.
import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { stashId, type KeyedNames, type MarkerIdSource, type StashIdOf } from '@context-guru/components';
import { StorageError } from '../storage-errors';
import type { DataKeyStore } from './data-keys';
import type { KeyProvider } from './key-provider';
import { isSealed, openText, sealText, sealedVersion } from './sealed-value';

const DATA_KEY_BYTES = 32;
/** Marker ids memoised per tenant (a warm turn re-derives every replayed one). */
const ID_MEMO_ENTRIES = 65_536;
/** Opened values memoised per tenant, by characters held: a warm turn reads the same sealed decisions again. */
const OPENED_MEMO_CHARS = 8 * 1024 * 1024;

function derive(dataKey: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', dataKey, Buffer.alloc(0), `context-guru ${purpose}`, 32));
}

export const tenantScope = (tenant: string): string => `tenant:${tenant}`;

/** One scope's unwrapped keys; held only in process memory. */
export class ScopeKeys implements KeyedNames {
  readonly current: number;
  private readonly sealing = new Map<number, Buffer>();
  private readonly idKey: Buffer;
  private readonly nameKey: Buffer;
  private readonly firstKey: Buffer;
  private readonly ids = new Map<string, string>();
  /**
   * Sealed value (with its AAD) → plaintext. Only what opened (authenticated) is kept, so a hit is
   * exactly what decrypting again would give; it saves the decipher of every replayed decision.
   */
  private readonly opened = new Map<string, string>();
  private openedChars = 0;

  constructor(
    readonly scope: string,
    versions: ReadonlyMap<number, Buffer>,
  ) {
    const ordered = [...versions.keys()].sort((a, b) => a - b);
    const [first] = ordered;
    const last = ordered[ordered.length - 1];
    const firstKey = first === undefined ? undefined : versions.get(first);
    if (firstKey === undefined || last === undefined) throw new Error(`${scope}: no data key`);
    for (const [v, k] of versions) this.sealing.set(v, derive(k, 'seal v1'));
    this.current = last;
    this.idKey = derive(firstKey, 'marker id v1');
    this.nameKey = derive(firstKey, 'name v1');
    this.firstKey = firstKey;
  }

  seal(plain: string, aad: string): string {
    const key = this.sealing.get(this.current);
    if (!key) throw new Error(`${this.scope}: no sealing key`); // current is always one of them
    return sealText(key, this.current, plain, `${this.scope}\u0000${aad}`);
  }

  /** Plaintext written before sealing passes as is; undefined for a version this process lacks. */
  open(stored: string, aad: string): string | undefined {
    if (!isSealed(stored)) return stored;
    const memoKey = `${aad}\u0000${stored}`;
    const hit = this.opened.get(memoKey);
    if (hit !== undefined) return hit;
    const key = this.sealing.get(sealedVersion(stored));
    if (!key) return undefined;
    const plain = openText(key, stored, `${this.scope}\u0000${aad}`);
    if (this.openedChars + memoKey.length > OPENED_MEMO_CHARS) {
      this.opened.clear();
      this.openedChars = 0;
    }
    this.opened.set(memoKey, plain);
    this.openedChars += memoKey.length;
    return plain;
  }

  knows(stored: string): boolean {
    return !isSealed(stored) || this.sealing.has(sealedVersion(stored));
  }

  /**
   * The keyed marker id of an original, given its unkeyed id (`stashId`, 16 hex of SHA-256):
   * 16 hex of HMAC(idKey, unkeyed id). Keying the memoised unkeyed id keeps a warm turn at one
   * map read per replayed marker; the HMAC hides it, so the id confirms nothing without the key.
   */
  markerId(digestHex: string): string {
    const hit = this.ids.get(digestHex);
    if (hit !== undefined) return hit;
    const id = createHmac('sha256', this.idKey).update(digestHex).digest('hex').slice(0, 16);
    if (this.ids.size >= ID_MEMO_ENTRIES) this.ids.clear();
    this.ids.set(digestHex, id);
    return id;
  }

  /** The tenant's `StashIdOf`: what the gateway mints `<<cg:ID>>` markers with. */
  readonly idOf: StashIdOf = (original) => this.markerId(stashId(original));

  /**
   * A keyed name (the derived session id, the traced session hash): 16 hex of HMAC(nameKey,
   * purpose NUL input). From the first data key, as marker ids, so a rotation renames nothing.
   */
  name(purpose: string, input: string): string {
    return createHmac('sha256', this.nameKey).update(`${purpose}\u0000${input}`).digest('hex').slice(0, 16);
  }

  /** A key for another purpose of this scope (the audit chain's MAC), stable across rotations. */
  macKey(purpose: string): Buffer {
    return derive(this.firstKey, `mac ${purpose}`);
  }
}

export class KeyRing implements MarkerIdSource {
  private readonly cache = new Map<string, Promise<ScopeKeys>>();
  /** The loads that resolved, readable without a microtask (the hot path's case). */
  private readonly ready = new Map<string, ScopeKeys>();

  constructor(
    readonly provider: KeyProvider,
    private readonly store: DataKeyStore,
  ) {}

  forTenant(tenant: string): Promise<ScopeKeys> {
    return this.forScope(tenantScope(tenant));
  }

  /** The tenant's keys when already loaded, else the load (await only then: no microtask on a hit). */
  tenantKeys(tenant: string): ScopeKeys | Promise<ScopeKeys> {
    return this.ready.get(tenantScope(tenant)) ?? this.forTenant(tenant);
  }

  /** The tenant's marker ids: synchronous once its keys are loaded. */
  idsFor(tenant: string): StashIdOf | Promise<StashIdOf> {
    const keys = this.tenantKeys(tenant);
    return keys instanceof Promise ? keys.then((k) => k.idOf) : keys.idOf;
  }

  /** The tenant's keyed names: synchronous once its keys are loaded. */
  namesFor(tenant: string): KeyedNames | Promise<KeyedNames> {
    return this.tenantKeys(tenant);
  }

  /** Cached after the first call; a failed load is forgotten so the next call tries again. */
  forScope(scope: string): Promise<ScopeKeys> {
    let p = this.cache.get(scope);
    if (!p) {
      p = this.load(scope);
      this.cache.set(scope, p);
      p.then(
        (k) => this.cache.get(scope) === p && this.ready.set(scope, k),
        () => this.cache.delete(scope),
      );
    }
    return p;
  }

  async seal(tenant: string, plain: string, aad: string): Promise<string> {
    return (await this.forTenant(tenant)).seal(plain, aad);
  }

  /** Opens a stored value; a version written by another replica after this one loaded is fetched once. */
  async open(tenant: string, stored: string, aad: string): Promise<string> {
    const keys = await this.opener(tenant, [stored]);
    const plain = keys.open(stored, aad);
    if (plain === undefined)
      throw new StorageError('sealed_value_invalid', `${tenantScope(tenant)}: no data key version ${sealedVersion(stored)}`);
    return plain;
  }

  /** The tenant's keys, reloaded when one of `stored` names a version they do not hold. */
  async opener(tenant: string, stored: readonly string[]): Promise<ScopeKeys> {
    const keys = await this.tenantKeys(tenant);
    if (stored.every((s) => keys.knows(s))) return keys;
    this.forget(tenantScope(tenant));
    return this.forTenant(tenant);
  }

  private forget(scope: string): void {
    this.cache.delete(scope);
    this.ready.delete(scope);
  }

  /** Adds a data-key version: new values seal with it, older ones still open; ids do not change. */
  async rotate(scope: string): Promise<number> {
    const have = await this.store.list(scope);
    const version = (have[have.length - 1]?.version ?? 0) + 1;
    await this.store.add(scope, await this.wrapped(scope, version));
    this.forget(scope);
    return version;
  }

  /** Rewraps every data key with the provider's current KEK (after CG_ENCRYPTION_KEY changed). */
  async rewrapAll(): Promise<number> {
    let n = 0;
    for (const scope of await this.store.scopes()) {
      for (const k of await this.store.list(scope)) {
        if (k.keyId === this.provider.keyId) continue;
        const plain = await this.provider.unwrap(k.wrapped, scope, k.keyId);
        await this.store.rewrap(scope, { version: k.version, keyId: this.provider.keyId, wrapped: await this.provider.wrap(plain, scope) });
        n++;
      }
    }
    return n;
  }

  private async load(scope: string): Promise<ScopeKeys> {
    let stored = await this.store.list(scope);
    if (stored.length === 0) {
      await this.store.add(scope, await this.wrapped(scope, 1));
      stored = await this.store.list(scope); // another replica may have won: use its key
    }
    const versions = new Map<number, Buffer>();
    for (const k of stored) versions.set(k.version, await this.provider.unwrap(k.wrapped, scope, k.keyId));
    return new ScopeKeys(scope, versions);
  }

  private async wrapped(scope: string, version: number) {
    return { version, keyId: this.provider.keyId, wrapped: await this.provider.wrap(randomBytes(DATA_KEY_BYTES), scope) };
  }
}
