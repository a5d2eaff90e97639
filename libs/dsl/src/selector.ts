// What a filter's `match` is tested against: the output's first non-empty line (colour codes
// removed, trimmed) and, when the tool call that produced the output is known, its command line
// written as `$ <command>` — so output-shape patterns anchored at `^` never mistake a command for
// output, and command patterns say so explicitly (`^\$ pytest\b`). A package-manager script
// banner (`> app@1.0.0 test` / `> jest`, or yarn's `yarn run v1…` / `$ jest`) is a wrapper, not
// output: the selector is the line after it, and the script's command is a command candidate.
import { stripAnsi } from './regex';

/** Selector lines longer than this are cut: a selector identifies output, it is not content. */
export const SELECTOR_MAX_CHARS = 4096;
/** The command line is cut at this many code points (upstream's bound). */
export const COMMAND_MAX_POINTS = 200;

const NPM_BANNER = /^> \S+@\S* \S/;
const YARN_BANNER = /^yarn run v\d/;

/** The first `n` lines of `text` holding anything but whitespace, trimmed and ANSI-free. */
function leadingLines(text: string, n: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (start <= text.length && out.length < n) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    // Only look at a bounded prefix of each line so a 1 MB single-line blob stays cheap.
    const line = stripAnsi(text.slice(start, Math.min(end, start + SELECTOR_MAX_CHARS))).trim();
    if (line !== '') out.push(line);
    start = end + 1;
  }
  return out;
}

/** The first non-empty line of `text`; '' when there is none. */
export function firstLine(text: string): string {
  return leadingLines(text, 1)[0] ?? '';
}

export interface OutputSelector {
  /** The line filters select on ('' when the output is blank past any banner). */
  line: string;
  /** The command a script banner says it ran, if the output starts with one. */
  script?: string;
}

export function outputSelector(output: string): OutputSelector {
  const [a = '', b = '', c = ''] = leadingLines(output, 3);
  if (NPM_BANNER.test(a) && b.startsWith('> ')) return { line: c, script: b.slice(2) };
  if (YARN_BANNER.test(a) && b.startsWith('$ ')) return { line: c, script: b.slice(2) };
  return { line: a };
}

/** `$ <first non-empty line of the command>`, or undefined when there is no command. */
export function commandLine(command: string | undefined): string | undefined {
  if (command === undefined) return undefined;
  const first = firstLine(command).replace(/^\$\s+/, '');
  if (first === '') return undefined;
  const points = [...first];
  return `$ ${points.length > COMMAND_MAX_POINTS ? points.slice(0, COMMAND_MAX_POINTS).join('') : first}`;
}

/** Every string a filter's `match` may select on: the output line, the script, the command. */
export function selectorCandidates(output: string, command?: string): string[] {
  const sel = outputSelector(output);
  const out: string[] = [];
  if (sel.line !== '') out.push(sel.line);
  for (const c of [commandLine(sel.script), commandLine(command)]) if (c !== undefined) out.push(c);
  return out;
}
