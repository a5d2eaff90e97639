// TypeBox on every body and query: the value is `unknown` until the compiled schema accepts it;
// the first error names the field (`/role: Expected union value`).
import type { PipeTransform } from '@nestjs/common';
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import { AdminError } from './admin-errors';

export class TypeBoxPipe<T extends TSchema> implements PipeTransform<unknown, Static<T>> {
  private readonly check: TypeCheck<T>;

  constructor(
    private readonly schema: T,
    private readonly where: 'body' | 'query' = 'body',
  ) {
    this.check = TypeCompiler.Compile(schema);
  }

  transform(value: unknown): Static<T> {
    // Query strings arrive as text: convert numbers/booleans the schema asks for first.
    const v = this.where === 'query' ? Value.Convert(this.schema, value ?? {}) : value;
    if (this.check.Check(v)) return v;
    const first = this.check.Errors(v).First();
    const at = first?.path ? `${this.where}${first.path}` : this.where;
    throw new AdminError('invalid_request', `${at}: ${first?.message ?? 'invalid'}`);
  }
}

/** Path parameters: a tenant id, a filter set name. */
export const NAME_PATTERN = '^[a-z0-9][a-z0-9_-]{0,62}$';
const NAME_RE = new RegExp(NAME_PATTERN);

export function checkName(what: string, v: string): string {
  if (!NAME_RE.test(v)) throw new AdminError('invalid_request', `${what} must match ${NAME_PATTERN}`);
  return v;
}

export function checkVersion(v: string): number {
  const n = Number(v);
  if (!/^[1-9][0-9]{0,8}$/.test(v)) throw new AdminError('invalid_request', `version must be a positive integer, got ${JSON.stringify(v)}`);
  return n;
}
