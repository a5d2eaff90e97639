// One error type for configuration problems: the message always names the offending key path so
// an operator can fix a YAML document without reading code.
export class ConfigError extends Error {
  constructor(
    readonly path: string,
    readonly detail: string,
  ) {
    super(path ? `${path}: ${detail}` : detail);
    this.name = 'ConfigError';
  }
}
