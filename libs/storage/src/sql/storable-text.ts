// What Postgres text can hold, byte-identically.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Postgres text holds valid UTF-8 without NUL. A string outside that cannot be stored
 * byte-identically, so it is skipped (and counted) rather than poisoning the whole batch.
 */
export function storableText(text: string): boolean {
  return !text.includes('\u0000') && !LONE_SURROGATE.test(text);
}
