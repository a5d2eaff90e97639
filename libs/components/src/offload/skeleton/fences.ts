// Finds fenced code blocks (``` or ~~~, CommonMark rules) and reports where each one's code sits in
// the text, so the code can be rewritten in place and everything around it stays byte-identical.

export interface FencedBlock {
  /** Lower-cased first word of the info string ('' when the fence has none). */
  readonly tag: string;
  /** Index of the first code character (just after the opening fence line). */
  readonly start: number;
  /** Index just past the code (start of the closing fence line, or end of text when unclosed). */
  readonly end: number;
}

const OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/;

export function findFencedBlocks(text: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  let pos = 0;
  let open: { fence: string; tag: string; start: number } | undefined;
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    const lineEnd = nl === -1 ? text.length : nl;
    const next = nl === -1 ? text.length : nl + 1;
    const line = text.slice(pos, lineEnd).replace(/\r$/, '');
    if (open) {
      if (isClosing(line, open.fence)) {
        blocks.push({ tag: open.tag, start: open.start, end: pos });
        open = undefined;
      }
    } else {
      // Both groups always take part in a match; the defaults only satisfy the type.
      const [, fence = '', info = ''] = OPEN.exec(line) ?? [];
      // A backtick fence's info string may not contain a backtick (that is inline code).
      if (fence && !(fence.startsWith('`') && info.includes('`'))) {
        open = { fence, tag: infoTag(info), start: next };
      }
    }
    pos = next;
  }
  // CommonMark: an unclosed fence runs to the end of the document.
  if (open && open.start < text.length) blocks.push({ tag: open.tag, start: open.start, end: text.length });
  return blocks;
}

function isClosing(line: string, fence: string): boolean {
  const run = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line)?.[1];
  return run !== undefined && run.charAt(0) === fence.charAt(0) && run.length >= fence.length;
}

/** `{.python}` → python, `ts title="x"` → ts, `py:src/a.py` → py. */
function infoTag(info: string): string {
  // split always returns at least one piece, so the defaults never apply.
  const [word = ''] = info.trim().split(/\s+/);
  const [tag = ''] = word.replace(/^\{?\.?/, '').split(/[:,{}]/);
  return tag.toLowerCase();
}
