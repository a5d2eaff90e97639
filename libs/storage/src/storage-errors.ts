// The one table of storage error codes: every failure the storage adapters raise on purpose is a
// StorageError with a code from here, so callers branch on the code (the gateway fails open with
// `store_unavailable`, the admin answers 503) and never on message text. docs/storage.md lists the
// same codes (an anti-drift test reads both).
import { tlsRefusal } from './tls-files';

export const STORAGE_ERRORS = {
  store_unavailable: {
    meaning: 'Redis or the database did not answer: not ready at boot, connection refused or lost, command timed out, client closed',
  },
  invalid_store_config: {
    meaning: 'an unknown hot or durable store kind, a kind without its URL, or memory-store limits that are not positive',
  },
  data_dir_locked: { meaning: 'another live process holds the embedded database directory (the message names it and the ways out)' },
  data_dir_lock_unreadable: {
    meaning: 'the lock file beside the embedded database names no owner (corrupt or foreign); delete it if no process uses it',
  },
  migration_invalid: { meaning: 'a migration file name is not NNNN_snake_case.sql, or one version appears twice' },
  migration_edited: { meaning: 'a migration file changed after it was applied (its checksum differs from the ledger)' },
  encryption_key_missing: { meaning: 'CG_ENCRYPTION_KEY_REQUIRED=true and no CG_ENCRYPTION_KEY: a server never generates its own key' },
  encryption_key_invalid: {
    meaning:
      'CG_ENCRYPTION_KEY (or _PREVIOUS, or the data-dir key file) is not 32 bytes in base64 / 64 hex, or the key file is readable by others',
  },
  encryption_key_mismatch: {
    meaning: "a tenant's data key was wrapped by an encryption key this process does not have (replicas with different keys)",
  },
  sealed_value_invalid: {
    meaning: 'a stored original or decision does not open with its tenant key: altered, moved, or of an unknown key version',
  },
} as const;

export type StorageErrorCode = keyof typeof STORAGE_ERRORS;

export class StorageError extends Error {
  constructor(
    readonly code: StorageErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StorageError';
  }
}

export function isStoreUnavailable(err: unknown): boolean {
  return err instanceof StorageError && err.code === 'store_unavailable';
}

/**
 * A failure the database itself reported (a SQL error: syntax, constraint, …) carries a SQLSTATE
 * `code` and a `severity`, in pg and in PGlite alike; anything else a SQL client throws means the
 * database did not answer.
 */
function reportedByDatabase(err: unknown): boolean {
  const e = err as { code?: unknown; severity?: unknown } | null;
  return typeof e?.code === 'string' && typeof e.severity === 'string';
}

/**
 * Rejects with `store_unavailable` when `p` fails for want of an answer; SQL errors pass as they are.
 * A certificate the CA does not verify says so (the boot fails on it: DurableBoot).
 */
export async function sqlCall<T>(what: string, p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof StorageError || reportedByDatabase(err)) throw err;
    const refused = tlsRefusal(err);
    if (refused) {
      const hint = 'sslrootcert in DATABASE_URL, or PGSSLROOTCERT, names the CA to trust';
      throw new StorageError('store_unavailable', `${what} TLS refused: ${refused} (${hint})`, { cause: err });
    }
    throw new StorageError('store_unavailable', `${what} did not answer: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
}
