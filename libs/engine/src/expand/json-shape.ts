// Narrowing helpers for provider JSON: everything arrives as `unknown` and is checked field by field.
import { isObject } from '@context-guru/components';

export { isObject, type JsonObject } from '@context-guru/components';

export function field(v: unknown, key: string): unknown {
  return isObject(v) ? v[key] : undefined;
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
