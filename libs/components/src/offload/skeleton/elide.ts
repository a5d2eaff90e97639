// Replaces big function bodies in one code block by a placeholder. Only functions that parsed
// without error are cut, and the result is accepted only if it reparses with the same grammar with
// no error the source did not have and none at a placeholder.
import type { Node, Parser, TreeCursor } from 'web-tree-sitter';
import { countTokens } from '../../shared/tokens';
import { BRACE_PLACEHOLDER, PYTHON_PLACEHOLDER, RUBY_PLACEHOLDER, TRANSPARENT_PARENTS, type LanguageSpec } from './languages';

export type ElideGate = 'source_parse_failed' | 'no_body_over_min_tokens' | 'reparse_failed';

export type ElideResult = { ok: true; code: string; elided: number } | { ok: false; gate: ElideGate };

interface Cut {
  start: number;
  end: number;
  text: string;
}

export function skeletonizeCode(parser: Parser, spec: LanguageSpec, code: string, minTokens: number): ElideResult {
  const prologue = spec.prologue && !spec.prologue.present.test(code) ? spec.prologue.text : '';
  const src = prologue + code;
  const tree = parser.parse(src);
  if (!tree) return { ok: false, gate: 'source_parse_failed' };
  let cuts: Cut[];
  let sourceErrors: number;
  try {
    // Real files rarely parse cleanly (C macros like PyObject_HEAD, newer syntax than the grammar):
    // errors only disqualify the functions that contain them, never the whole block.
    sourceErrors = errorSpans(tree.rootNode).length;
    cuts = collectCuts(tree.rootNode.walk(), src, spec, minTokens);
  } finally {
    tree.delete();
  }
  if (cuts.length === 0) return { ok: false, gate: sourceErrors > 0 ? 'source_parse_failed' : 'no_body_over_min_tokens' };
  const out = applyCuts(src, cuts);
  const again = parser.parse(out);
  const clean = again !== null && reparsesAsWell(errorSpans(again.rootNode), sourceErrors, placeholderSpans(cuts));
  again?.delete();
  if (!clean) return { ok: false, gate: 'reparse_failed' };
  return { ok: true, code: out.slice(prologue.length), elided: cuts.length };
}

/** ERROR and MISSING nodes, found by descending only into subtrees that contain one. */
function errorSpans(root: Node): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const stack: Node[] = [root];
  for (let n = stack.pop(); n !== undefined; n = stack.pop()) {
    if (n.type === 'ERROR' || n.isMissing) out.push([n.startIndex, n.endIndex]);
    else if (n.hasError) for (const c of n.children) if (c) stack.push(c);
  }
  return out;
}

/** Where each placeholder sits in the output. */
function placeholderSpans(cuts: readonly Cut[]): Array<[number, number]> {
  let shift = 0;
  return cuts.map((c) => {
    const start = c.start + shift;
    shift += c.text.length - (c.end - c.start);
    return [start, start + c.text.length];
  });
}

/** No error the source did not have, and none touching a placeholder. */
function reparsesAsWell(errors: Array<[number, number]>, sourceErrors: number, placeholders: Array<[number, number]>): boolean {
  if (errors.length > sourceErrors) return false;
  return !errors.some(([s, e]) => placeholders.some(([ps, pe]) => s < pe && ps < e));
}

/**
 * Pre-order walk with a cursor (no per-node allocation). At a function the walk either cuts its
 * body or skips it — a nested function is never bigger than the body that contains it — and only
 * descends when the node has no body it can replace (callbacks, expression bodies).
 */
function collectCuts(cursor: TreeCursor, src: string, spec: LanguageSpec, minTokens: number): Cut[] {
  const cuts: Cut[] = [];
  try {
    for (;;) {
      const type = cursor.nodeType;
      let enter = true;
      // Named nodes only: older grammars call a function expression `function`, like the keyword.
      if (type === 'ERROR') {
        enter = false; // node types inside an error are guesses: nothing there is cut
      } else if (cursor.nodeIsNamed && (spec.functions.has(type) || spec.closures.has(type) || spec.selfBody.has(type))) {
        const node = cursor.currentNode;
        // A function containing an error may have its body boundaries wrong: only its inner functions are candidates.
        enter = node.hasError ? true : visit(node, src, spec, minTokens, cuts);
      }
      if (enter && cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return cuts;
      }
    }
  } finally {
    cursor.delete();
  }
}

/** Returns whether the walk should descend into the node. */
function visit(node: Node, src: string, spec: LanguageSpec, minTokens: number, cuts: Cut[]): boolean {
  if (spec.closures.has(node.type) && !isAssigned(node, spec)) return true;
  const cut = cutFor(node, src, spec);
  if (!cut) return true;
  const elided = src.slice(cut.start, cut.end);
  // Never "elide" a body into a longer placeholder (possible only with a tiny min_tokens).
  if (elided.length <= cut.text.length) return false;
  // A token is at least one UTF-8 byte, so a short body is below the floor without tokenizing it.
  if (Buffer.byteLength(elided, 'utf8') >= minTokens && countTokens(elided) >= minTokens) cuts.push(cut);
  return false;
}

/**
 * Whether a closure is bound to a name or member. Wrappers are looked through, and so is a closure
 * whose expression body it is: `const mw = (opts) => (req, res) => { … }` names the inner one too.
 */
function isAssigned(node: Node, spec: LanguageSpec): boolean {
  let cur = node;
  let p = node.parent;
  while (p && (TRANSPARENT_PARENTS.has(p.type) || (spec.closures.has(p.type) && isBodyOf(cur, p)))) {
    cur = p;
    p = p.parent;
  }
  return p !== null && spec.assigned.has(p.type);
}

function isBodyOf(child: Node, parent: Node): boolean {
  const body = parent.childForFieldName('body');
  return body !== null && body.startIndex === child.startIndex && body.endIndex === child.endIndex;
}

function cutFor(node: Node, src: string, spec: LanguageSpec): Cut | undefined {
  if (spec.style === 'python') return pythonCut(node, src);
  if (spec.style === 'ruby') {
    const body = node.childForFieldName('body');
    return body && body.type === 'body_statement' ? trimmed(body.startIndex, body.endIndex, src, RUBY_PLACEHOLDER) : undefined;
  }
  const span = braceBody(node, spec);
  if (!span) return undefined;
  const [start, end] = span;
  if (src[start] === '{' && src[end - 1] === '}') return { start, end, text: BRACE_PLACEHOLDER };
  return spec.exprBody ? trimmed(start, end, src, spec.exprBody) : undefined;
}

/** The body span: the node itself, its `body` field, a body-typed child, or its own `{ … }` tokens. */
function braceBody(node: Node, spec: LanguageSpec): [number, number] | undefined {
  if (spec.selfBody.has(node.type)) return [node.startIndex, node.endIndex];
  const field = node.childForFieldName('body');
  if (field) return [field.startIndex, field.endIndex];
  let open = -1;
  let close = -1;
  for (const child of node.children) {
    if (!child) continue;
    if (spec.bodyTypes.has(child.type)) return [child.startIndex, child.endIndex];
    if (child.type === '{' && open < 0) open = child.startIndex;
    if (child.type === '}') close = child.endIndex;
  }
  return open >= 0 && close > open ? [open, close] : undefined;
}

/** Keeps the def line and a leading docstring; everything after becomes an indented `...`. */
function pythonCut(node: Node, src: string): Cut | undefined {
  const body = node.childForFieldName('body');
  if (!body || body.type !== 'block') return undefined;
  const stmts = body.namedChildren.filter((c): c is Node => c !== null);
  const first = stmts.findIndex((c) => c.type !== 'comment');
  const lead = stmts[first];
  if (lead === undefined) return undefined;
  const from = stmts[isDocstring(lead) ? first + 1 : 0];
  if (from === undefined) return undefined;
  return trimmed(from.startIndex, body.endIndex, src, PYTHON_PLACEHOLDER);
}

function isDocstring(stmt: Node): boolean {
  if (stmt.type !== 'expression_statement' || stmt.namedChildCount !== 1) return false;
  const t = stmt.namedChild(0)?.type;
  return t === 'string' || t === 'concatenated_string';
}

/** A cut that never swallows the line break after the body (the next line keeps its place). */
function trimmed(start: number, end: number, src: string, text: string): Cut {
  let e = end;
  while (e > start && /\s/.test(src.charAt(e - 1))) e -= 1;
  return { start, end: e, text };
}

function applyCuts(src: string, cuts: readonly Cut[]): string {
  let out = '';
  let at = 0;
  for (const c of cuts) {
    out += src.slice(at, c.start) + c.text;
    at = c.end;
  }
  return out + src.slice(at);
}
