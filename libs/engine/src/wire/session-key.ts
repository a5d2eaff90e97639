// A session key names where frozen decisions and stashed originals live. An explicit id the
// client sends always names its session: kept when short and path-safe, hashed (namedSessionBase,
// the one function every route uses) when not — never replaced by the content hash, which only
// names sessions that sent no id. Keys are always tenant-scoped.
import { isObject, sessionIdBase, sha256Hex, type KeyedNames } from '@context-guru/components';
import type { WireView } from './wire.types';

/** The header a client names its session with (§4.1), read by every route. */
export const SESSION_HEADER = 'x-context-guru-session';
const MAX_JSON_ID_BYTES = 1024;

/**
 * Claude Code sends metadata.user_id as a JSON-object string carrying `session_id`; an object
 * without one names no session. Text that only looks like JSON is an id like any other.
 */
function unwrap(candidate: string): string | null {
  const t = candidate.trim();
  if (!t.startsWith('{') || Buffer.byteLength(t, 'utf8') > MAX_JSON_ID_BYTES) return t;
  let parsed: unknown;
  try {
    parsed = JSON.parse(t);
  } catch {
    return t;
  }
  return isObject(parsed) ? (typeof parsed.session_id === 'string' ? parsed.session_id : null) : t;
}

/**
 * The session base of an id a client named in the session header (or /expand's `session`): every
 * route reads it with this one function, so a marker resolves under the very id the client used.
 * An id that names nothing (empty, blank, or a JSON object without `session_id`) is hashed whole
 * rather than dropped: dropped, the chat route would fall back to the content hash, which /expand
 * given the same id cannot know.
 */
export function namedSessionBase(raw: string): string {
  // Trimmed first, as an HTTP header value is: " " in a query names what " " in a header does.
  const id = raw.trim();
  const inner = unwrap(id);
  return (inner === null ? null : sessionIdBase(inner)) ?? `h-${sha256Hex(id).slice(0, 32)}`;
}

/**
 * The key a request has with no explicit id (its alias): a digest of system head and first user
 * text, keyed with the tenant's key when there is one (16 hex of HMAC over the SHA-256), so a
 * reader of the store or the traces cannot confirm a guessed first message with it. Without
 * `names`: the unkeyed 16 hex of SHA-256, which sessions started before the keying carry
 * (legacy-session.step.ts finds them).
 */
export function derivedSessionBase(view: Pick<WireView, 'systemHead' | 'firstUserText'>, names?: KeyedNames): string {
  const digest = sha256Hex(`${view.systemHead}\x00${view.firstUserText}`);
  return names ? names.name('session', digest) : digest.slice(0, 16);
}

/**
 * A session base of the derived shape (16 lowercase hex). An explicit id of that shape cannot be
 * told from a derived one, so it is treated alike where that matters (GET /expand without a key).
 */
export function isDerivedSessionBase(base: string): boolean {
  return /^[0-9a-f]{16}$/.test(base);
}

/**
 * The Responses API's own session names, in order: `prompt_cache_key` (Codex sends its session id
 * there), the `session_id` / `session-id` / `conversation_id` headers, then the `conversation` (an id or {id}).
 */
function responsesCandidates(body: Record<string, unknown>, conversationHeader: string | undefined): unknown[] {
  const conversation = body.conversation;
  return [body.prompt_cache_key, conversationHeader, isObject(conversation) ? conversation.id : conversation];
}

function explicitSessionBase(
  view: Pick<WireView, 'body' | 'dialect'>,
  header: string | undefined,
  conversationHeader?: string,
): string | null {
  const metadata = view.body.metadata;
  const meta = isObject(metadata) ? metadata : {};
  const own = view.dialect === 'responses' ? responsesCandidates(view.body, conversationHeader) : [];
  if (header !== undefined) return namedSessionBase(header);
  for (const candidate of [...own, meta.user_id, meta.taskId]) {
    if (typeof candidate !== 'string') continue;
    const inner = unwrap(candidate);
    const id = inner === null ? null : sessionIdBase(inner);
    if (id) return id;
  }
  return null;
}

/**
 * §4.1: header, then (Responses) the dialect's own ids, then metadata.user_id, then
 * metadata.taskId, else the content hash; `${tenant}:${base}`.
 */
export function resolveSessionKey(
  view: WireView,
  header: string | undefined,
  tenant: string,
  conversationHeader?: string,
  names?: KeyedNames,
): string {
  return `${tenant}:${explicitSessionBase(view, header, conversationHeader) ?? derivedSessionBase(view, names)}`;
}
