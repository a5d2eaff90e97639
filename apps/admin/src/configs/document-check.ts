// A pipeline document is accepted only if it really builds (the registry decodes every
// component's options, cmdfilter compiles its inline filters): a bad one is a 422 naming the key.
import {
  ConfigError,
  buildPipeline,
  parsePipelineDocument,
  parsePipelineYaml,
  type BuiltConfig,
  type PipelineDocument,
} from '@context-guru/components';
import { DslError } from '@context-guru/dsl';
import { AdminError } from '../common/admin-errors';

/** `document` is the object (same schema as CONFIG) or its YAML text. */
export function checkDocument(raw: unknown): { document: PipelineDocument; built: BuiltConfig } {
  try {
    const document = typeof raw === 'string' ? parsePipelineYaml(raw, 'document') : parsePipelineDocument(raw, 'document');
    return { document, built: buildPipeline(document, 'document') };
  } catch (err) {
    if (err instanceof ConfigError || err instanceof DslError) throw new AdminError('invalid_document', err.message);
    throw new AdminError('invalid_document', `document: ${err instanceof Error ? err.message : String(err)}`);
  }
}
