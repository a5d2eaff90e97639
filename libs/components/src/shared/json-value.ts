// Parsed JSON arrives as `unknown` everywhere (request bodies, provider replies, option documents);
// this one guard is how every package narrows a value to a JSON object before reading its fields.
export type JsonObject = Record<string, unknown>;

/** A JSON object: not null and not an array (both of which are `typeof 'object'`). */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
