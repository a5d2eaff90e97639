// The component library's error table: every code of COMPONENT_ERRORS is produced here by building
// a real pipeline document, each a ConfigError carrying that code and naming the key path, and
// docs/errors.md lists exactly those codes.
import {
  COMPONENT_ERRORS,
  ConfigError,
  buildPipeline,
  parsePipelineDocument,
  parsePipelineYaml,
  type ComponentErrorCode,
} from '@context-guru/components';
import { documentedCodes } from '../../support/error-docs';

function failure(build: () => unknown): ConfigError {
  try {
    build();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('the document built, but it must be refused');
}

const build = (doc: unknown) => () => buildPipeline(parsePipelineDocument(doc, 'config'), 'config');

describe('component library error codes', () => {
  const cases: Array<[ComponentErrorCode, () => unknown, string]> = [
    ['invalid_yaml', () => parsePipelineYaml('preset: [balanced', 'config'), 'config'],
    ['not_a_mapping', build({ preset: 'balanced', components: { mask: 'yes' } }), 'config.components.mask'],
    ['unknown_key', build({ preset: 'balanced', components: { mask: { keep_recnet: 2 } } }), 'config.components.mask.keep_recnet'],
    ['invalid_value', build({ preset: 'balanced', components: { mask: { keep_recent: -1 } } }), 'config.components.mask.keep_recent'],
    ['unknown_preset', build({ preset: 'thrifty' }), 'config.preset'],
    ['unknown_component', build({ pipeline: ['format', 'squash'] }), 'config.pipeline[1]'],
    ['duplicate_component', build({ pipeline: ['format', 'format'] }), 'config.pipeline[1]'],
    [
      'conflicting_options',
      build({ pipeline: ['extract'], components: { extract: { rewrite: true, marker_mode: 'full' } } }),
      'config.components.extract.rewrite',
    ],
    [
      'invalid_filter',
      build({ pipeline: ['cmdfilter'], components: { cmdfilter: { filters: ['schema_version: 2\n'] } } }),
      'config.components.cmdfilter.filters[0]',
    ],
  ];

  it.each(cases)('%s, naming %s', (code, run, path) => {
    const err = failure(run);
    expect([err.code, err.path]).toEqual([code, path]);
  });

  it('refuses a preset name every object inherits (it used to pass the check and fail as a TypeError)', () => {
    const err = failure(build({ preset: 'constructor' }));
    expect([err.code, err.path]).toEqual(['unknown_preset', 'config.preset']);
  });

  it('covers every code of the table, and docs/errors.md lists exactly those codes', () => {
    expect(cases.map(([c]) => c).sort()).toEqual(Object.keys(COMPONENT_ERRORS).sort());
    expect(documentedCodes('Components').map((d) => d.code)).toEqual(Object.keys(COMPONENT_ERRORS));
  });
});
