// Where wrapped data keys live: beside the data they protect (the database, or Redis when there is
// no database), useless there without the KEK. A scope's versions are only ever added; the first
// writer of a version wins, so replicas creating a tenant's key at once all end up with one key.
import { col, type SqlQueryable } from '../sql/sql-client';

export interface WrappedDataKey {
  version: number;
  /** The KEK that wrapped it (KeyProvider.keyId). */
  keyId: string;
  wrapped: Buffer;
}

export interface DataKeyStore {
  /** Every version of a scope's data key, oldest first. */
  list(scope: string): Promise<WrappedDataKey[]>;
  /** Stores a version unless it exists (then the stored one stays). */
  add(scope: string, key: WrappedDataKey): Promise<void>;
  /** Replaces the wrapping of an existing version (a KEK rotation: same data key, new KEK). */
  rewrap(scope: string, key: WrappedDataKey): Promise<void>;
  /** Every scope with a key (a KEK rotation walks them). */
  scopes(): Promise<string[]>;
}

export class SqlDataKeyStore implements DataKeyStore {
  constructor(private readonly sql: SqlQueryable) {}

  async list(scope: string): Promise<WrappedDataKey[]> {
    const rows = await this.sql.query('SELECT version, kek_id, wrapped FROM data_keys WHERE scope = $1 ORDER BY version', [scope]);
    return rows.map((r) => ({ version: col.num(r, 'version'), keyId: col.str(r, 'kek_id'), wrapped: col.bytes(r, 'wrapped') }));
  }

  async add(scope: string, k: WrappedDataKey): Promise<void> {
    await this.sql.query(
      'INSERT INTO data_keys (scope, version, kek_id, wrapped) VALUES ($1, $2, $3, $4) ON CONFLICT (scope, version) DO NOTHING',
      [scope, k.version, k.keyId, k.wrapped],
    );
  }

  async rewrap(scope: string, k: WrappedDataKey): Promise<void> {
    await this.sql.query('UPDATE data_keys SET kek_id = $3, wrapped = $4 WHERE scope = $1 AND version = $2', [
      scope,
      k.version,
      k.keyId,
      k.wrapped,
    ]);
  }

  async scopes(): Promise<string[]> {
    return (await this.sql.query('SELECT DISTINCT scope FROM data_keys ORDER BY scope')).map((r) => col.str(r, 'scope'));
  }
}

/** For a process that keeps nothing at rest (memory store, no database): keys live as long as it. */
export class MemoryDataKeyStore implements DataKeyStore {
  private readonly keys = new Map<string, WrappedDataKey[]>();

  list(scope: string): Promise<WrappedDataKey[]> {
    return Promise.resolve([...(this.keys.get(scope) ?? [])]);
  }

  add(scope: string, k: WrappedDataKey): Promise<void> {
    const have = this.keys.get(scope) ?? [];
    if (!have.some((h) => h.version === k.version))
      this.keys.set(
        scope,
        [...have, k].sort((a, b) => a.version - b.version),
      );
    return Promise.resolve();
  }

  rewrap(scope: string, k: WrappedDataKey): Promise<void> {
    this.keys.set(
      scope,
      (this.keys.get(scope) ?? []).map((h) => (h.version === k.version ? k : h)),
    );
    return Promise.resolve();
  }

  scopes(): Promise<string[]> {
    return Promise.resolve([...this.keys.keys()]);
  }
}
