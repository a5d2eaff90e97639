// The two ids a caller hands the gateway, read one way everywhere (chat routes, /compact, GET
// /expand, the model's expand calls, the control plane's ops expand): a session id is kept when
// path-safe and hashed when not — never replaced by something else — and an expand id may be
// the bare HASH or the whole marker a model copied.
import { sha256Hex } from './hash';

const SAFE_SESSION_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const WHOLE_MARKER = /^<<cg:\s*([^<>\s]*)\s*>>$/;

/**
 * The storage-safe form of an explicit session id: trimmed; kept as it is when 1–128 chars of
 * [A-Za-z0-9._:-] and not all dots; otherwise (`../../x`, `proj/feature-1`, unicode, too long)
 * `h-` + 32 hex of its SHA-256 — stable, so the same id always names the same session. Null only
 * for an empty id.
 */
export function sessionIdBase(candidate: string): string | null {
  const id = candidate.trim();
  if (id === '') return null;
  if (SAFE_SESSION_ID.test(id) && !/^\.+$/.test(id)) return id;
  return `h-${sha256Hex(id).slice(0, 32)}`;
}

/** The stash HASH of an expand request: the bare HASH or the whole marker `<<cg:HASH>>`, trimmed. */
export function expandIdOf(input: string): string {
  const t = input.trim();
  const [, id] = WHOLE_MARKER.exec(t) ?? [];
  return id ?? t;
}
