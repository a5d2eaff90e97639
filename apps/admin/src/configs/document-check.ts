// A pipeline document is accepted only if it really builds (the registry decodes every
// component's options, cmdfilter compiles its inline filters): a bad one is a 422 naming the key.
import {
  ConfigError,
  buildPipeline,
  parsePipelineDocument,
  parsePipelineYaml,
  type BuiltConfig,
  type PipelineDocument,
  StoreOptions,
} from '@context-guru/components';
import { Value } from '@sinclair/typebox/value';
import { DslError } from '@context-guru/dsl';
import { AdminError } from '../common/admin-errors';

/**
 * A tenant's `store.ttl_seconds` and `store.max_entries` are not applied per tenant (the gateway's
 * boot CONFIG sizes its stores for every tenant): a value other than the default is refused rather
 * than stored and ignored. `store.enabled` is applied (docs/security.md).
 */
function refuseUnappliedStore(document: PipelineDocument): void {
  const defaults = Value.Create(StoreOptions);
  for (const key of ['ttl_seconds', 'max_entries'] as const) {
    const v = document.store?.[key];
    if (v !== undefined && v !== defaults[key])
      throw new AdminError(
        'invalid_document',
        `document.store.${key}: not applied per tenant (the gateway's CONFIG sets it for every tenant); leave it out`,
      );
  }
}

/** `document` is the object (same schema as CONFIG) or its YAML text. */
export function checkDocument(raw: unknown): { document: PipelineDocument; built: BuiltConfig } {
  try {
    const document = typeof raw === 'string' ? parsePipelineYaml(raw, 'document') : parsePipelineDocument(raw, 'document');
    refuseUnappliedStore(document);
    return { document, built: buildPipeline(document, 'document') };
  } catch (err) {
    if (err instanceof AdminError) throw err;
    if (err instanceof ConfigError || err instanceof DslError) throw new AdminError('invalid_document', err.message);
    throw new AdminError('invalid_document', `document: ${err instanceof Error ? err.message : String(err)}`);
  }
}
