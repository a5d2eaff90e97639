// A session key names where frozen decisions and stashed originals live, so an explicit id is
// only trusted when it is short and path-safe; anything else silently falls back to the content
// hash (fail open: a bad id never fails the request). Keys are always tenant-scoped.
import { sha256Hex } from '@context-guru/components';
import { isObject } from './splice';
import type { WireView } from './wire.types';

export const SESSION_HEADER = 'x-context-guru-session';
const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const MAX_JSON_ID_BYTES = 1024;

/** A usable id, or null: trimmed, 1–128 chars of [A-Za-z0-9._:-], not all dots. */
export function sanitizeSessionId(candidate: string): string | null {
  const id = candidate.trim();
  if (!SAFE_ID.test(id) || /^\.+$/.test(id)) return null;
  return id;
}

/** Claude Code sends metadata.user_id as a JSON-object string carrying `session_id`. */
function unwrap(candidate: string): string | null {
  const t = candidate.trim();
  if (!t.startsWith('{')) return t;
  if (Buffer.byteLength(t, 'utf8') > MAX_JSON_ID_BYTES) return null;
  try {
    const parsed: unknown = JSON.parse(t);
    return isObject(parsed) && typeof parsed.session_id === 'string' ? parsed.session_id : null;
  } catch {
    return null;
  }
}

/** The key a request has with no explicit id (its alias): hash of system head and first user text. */
export function derivedSessionBase(view: Pick<WireView, 'systemHead' | 'firstUserText'>): string {
  return sha256Hex(`${view.systemHead}\x00${view.firstUserText}`).slice(0, 16);
}

export function explicitSessionBase(view: Pick<WireView, 'body'>, header: string | undefined): string | null {
  const metadata = view.body.metadata;
  const meta = isObject(metadata) ? metadata : {};
  for (const candidate of [header, meta.user_id, meta.taskId]) {
    if (typeof candidate !== 'string') continue;
    const inner = unwrap(candidate);
    const id = inner === null ? null : sanitizeSessionId(inner);
    if (id) return id;
  }
  return null;
}

/** §4.1: header, then metadata.user_id, then metadata.taskId, else the content hash; `${tenant}:${base}`. */
export function resolveSessionKey(view: WireView, header: string | undefined, tenant: string): string {
  return `${tenant}:${explicitSessionBase(view, header) ?? derivedSessionBase(view)}`;
}

export function sessionAlias(view: WireView, tenant: string): string {
  return `${tenant}:${derivedSessionBase(view)}`;
}
