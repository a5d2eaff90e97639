// Markers are the only reversible trace a lossy component leaves: `<<cg:` + the stash's id of the
// original + `>>` (the gateway keys it per tenant: docs/security.md; unkeyed, the first 16 hex of
// SHA-256(original), `stashId`). The content key (24 hex over whitespace-folded, marker-free text) is a
// different hash on purpose: it names content for replay and kept-verbatim, not a stash entry.
import { sha256Hex } from './hash';
import { textMemo } from './text-memo';

export const EXPAND_TOOL_NAME = 'context_guru_expand';
export const SUMMARY_SENTINEL = '⟪cg⟫';
export const MARKER_RE = /<<cg:([A-Za-z0-9_-]{1,64})>>/g;
export const HINT_FULL_OUTPUT = ` [full output: call ${EXPAND_TOOL_NAME}]`;
export const HINT_FULL_SOURCE = ` [full source: call ${EXPAND_TOOL_NAME}]`;
export const HINT_FULL_TRAJECTORY = ` [full earlier trajectory: call ${EXPAND_TOOL_NAME}]`;

export type MarkerMode = 'full' | 'summary' | 'off';

/** The unkeyed id: first 16 hex of SHA-256(original); memoised because replays re-derive it every turn. */
export const stashId: (original: string) => string = textMemo((original) => sha256Hex(original).slice(0, 16));

export function marker(id: string): string {
  return `<<cg:${id}>>`;
}

const MARKER_MEMO_CHARS = 8 * 1024 * 1024;

/**
 * Distinct marker ids in first-seen order (one array per text: callers only read it). Memoised:
 * every replay of a frozen decision asks it of the same replacement on every turn. The memo's
 * keys are replacements the stores hold anyway; its bound (8 M characters, not the token memo's
 * 64 M) keeps it from holding many of them after the stores let them go.
 */
export const markerIds: (text: string) => readonly string[] = textMemo((text) => {
  if (!text.includes('<<cg:')) return NO_IDS;
  const ids = new Set<string>();
  for (const [, id] of text.matchAll(MARKER_RE)) if (id !== undefined) ids.add(id);
  return [...ids];
}, MARKER_MEMO_CHARS);

const NO_IDS: readonly string[] = Object.freeze([]);
/** MARKER_RE without the global flag, so `test` keeps no position between calls. */
const HAS_MARKER_RE = new RegExp(MARKER_RE.source);

export function hasMarker(text: string): boolean {
  return text.includes('<<cg:') && HAS_MARKER_RE.test(text);
}

/**
 * Carries a resolvable marker or the non-resolvable summary sentinel. Memoised past a few KB: every
 * offloader asks it of every tool output on every turn, and a lookup does not scan the text.
 */
export const hasPlaceholder: (text: string) => boolean = textMemo(
  (text) => text.includes(SUMMARY_SENTINEL) || hasMarker(text),
  16 * 1024 * 1024,
  2048,
);

/** Names content for replay and kept-verbatim; memoised because every turn re-sends old outputs. */
export const contentKey: (text: string) => string = textMemo((text) =>
  sha256Hex(text.replace(MARKER_RE, '').replace(/\s+/g, ' ').trim()).slice(0, 24),
);

/**
 * The trailing token an offloader writes for a given marker_mode: full → marker + hint (the
 * original is stashed by the caller), summary → the sentinel alone, off → nothing.
 */
export function markerToken(mode: MarkerMode, id: string, hint: string): string {
  if (mode === 'full') return `${marker(id)}${hint}`;
  if (mode === 'summary') return SUMMARY_SENTINEL;
  return '';
}

/** An offloader's text followed by its marker token; the text alone when the mode writes none. */
export function withToken(text: string, token: string, sep = ' '): string {
  return token ? `${text}${sep}${token}` : text;
}

/**
 * A one-line peek at hidden content: whitespace folded, no live marker, at most maxChars code
 * points followed by an ellipsis when cut.
 */
export function headPeek(text: string, maxChars: number): string {
  if (maxChars <= 0) return '';
  // A pure function of the leading 4 × maxChars code units: memoised on them (a short key), since
  // mask peeks at every older output it may offload again on each turn of every session.
  let peek = peeks.get(maxChars);
  if (!peek) peeks.set(maxChars, (peek = textMemo((window) => foldedPeek(window, maxChars), PEEK_MEMO_CHARS)));
  return peek(text.slice(0, maxChars * 4));
}

const PEEK_MEMO_CHARS = 4 * 1024 * 1024;
const peeks = new Map<number, (window: string) => string>();

function foldedPeek(head: string, maxChars: number): string {
  const folded = head.replace(/\s+/g, ' ').trim().replace(/<<cg:/g, '<< cg:');
  const points = [...folded];
  return points.length > maxChars ? `${points.slice(0, maxChars).join('')}…` : folded;
}
