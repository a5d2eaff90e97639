// Strict option decoding for component blocks and the pipeline document: unknown keys are errors
// that name the key, defaults come from the schema, and wrong types name the path.
import { type Static, type TObject, type TSchema, Kind } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ConfigError } from './errors';
import { isObject } from './json-value';

function rejectUnknownKeys(schema: TSchema, value: unknown, path: string): void {
  if (schema[Kind] !== 'Object' || !isObject(value)) return;
  const props = (schema as TObject).properties;
  for (const key of Object.keys(value)) {
    const sub = props[key];
    if (!sub) {
      throw new ConfigError('unknown_key', `${path}.${key}`, `unknown key (known: ${Object.keys(props).join(', ') || 'none'})`);
    }
    rejectUnknownKeys(sub, value[key], `${path}.${key}`);
  }
}

export function decodeOptions<T extends TObject>(schema: T, raw: unknown, path: string): Static<T> {
  const input = raw === undefined || raw === null ? {} : raw;
  if (!isObject(input)) throw new ConfigError('not_a_mapping', path, 'must be a mapping');
  rejectUnknownKeys(schema, input, path);
  const withDefaults = Value.Default(schema, structuredClone(input));
  const first = Value.Errors(schema, withDefaults).First();
  if (first) {
    const where = first.path ? `${path}${first.path.replace(/\//g, '.')}` : path;
    throw new ConfigError('invalid_value', where, first.message);
  }
  return withDefaults as Static<T>;
}
