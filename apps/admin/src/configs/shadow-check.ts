// A document's `shadow.version` names the candidate the gateway evaluates beside it, so it must be
// another version already stored for the same tenant. Checked inside the push's transaction (the
// tenant row is locked, so the numbering cannot move under it); a bad one stores nothing.
import type { PipelineDocument } from '@context-guru/components';
import { configsRepository, type SqlQueryable } from '@context-guru/storage';
import { AdminError } from '../common/admin-errors';

export async function checkShadowVersion(tx: SqlQueryable, tenant: string, document: PipelineDocument): Promise<void> {
  const candidate = document.shadow?.version;
  if (candidate === undefined) return;
  const latest = await configsRepository.latest(tx, tenant);
  if (candidate === latest + 1) {
    throw new AdminError(
      'invalid_document',
      `document.shadow.version: ${candidate} is this document's own version; the candidate must be another stored version of tenant "${tenant}"`,
    );
  }
  if (candidate > latest) {
    const known = latest === 0 ? 'it has none yet' : `its versions are 1–${latest}`;
    throw new AdminError(
      'invalid_document',
      `document.shadow.version: config version ${candidate} of tenant "${tenant}" does not exist (${known})`,
    );
  }
}
