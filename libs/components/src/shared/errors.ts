// The one table of component-library error codes. A component never fails a request (the pipeline
// owns failure); what this library raises is a configuration problem, at build time, as a
// ConfigError with a code from here and a message that names the offending key path, so an
// operator can fix a YAML document without reading code. docs/errors.md lists the same codes.
export const COMPONENT_ERRORS = {
  invalid_yaml: { meaning: 'the pipeline document is not YAML' },
  not_a_mapping: { meaning: 'the document, or a component block, is not a mapping' },
  unknown_key: { meaning: 'a key the schema does not know (the message lists the known keys)' },
  invalid_value: { meaning: 'a value of the wrong type or out of its range (the message names the key and the rule)' },
  unknown_preset: { meaning: '`preset` names no preset (the message lists them)' },
  unknown_component: { meaning: 'a `pipeline` entry or a `components` block names no registered component (the message lists them)' },
  duplicate_component: { meaning: 'one component listed twice in `pipeline`' },
  conflicting_options: { meaning: 'options each valid alone that cannot go together (extract `rewrite: true` with `marker_mode: full`)' },
  invalid_filter: {
    meaning: 'an inline cmdfilter document that does not load or fails its inline tests (the message has the DSL error and line)',
  },
} as const;

export type ComponentErrorCode = keyof typeof COMPONENT_ERRORS;

export class ConfigError extends Error {
  constructor(
    readonly code: ComponentErrorCode,
    readonly path: string,
    readonly detail: string,
  ) {
    super(path ? `${path}: ${detail}` : detail);
    this.name = 'ConfigError';
  }
}
