// Every pattern a filter carries runs on RE2 (re2js): matching time is linear in the input, so a
// pattern a tenant sends through the control plane can never stall a request (no ReDoS). RE2 has
// no lookaround and no backreferences in patterns; such patterns are rejected at load.
import { RE2JS } from 're2js';

/** Cap on the compiled program: bounds the constant factor of linear-time matching. */
export const MAX_PROGRAM_SIZE = 1000;

/** A compiled pattern. `^`/`$` match at line boundaries; `\A`/`\z` anchor the whole text. */
export class Pattern {
  private constructor(
    readonly source: string,
    private readonly re: RE2JS,
  ) {}

  /** Compiles `source`, throwing an Error whose message says why it is not a valid RE2 pattern. */
  static compile(source: string): Pattern {
    let re: RE2JS;
    try {
      re = RE2JS.compile(source, RE2JS.MULTILINE);
    } catch (err) {
      throw new Error(`invalid regex ${JSON.stringify(source)}: ${(err as Error).message}`, { cause: err });
    }
    if (re.programSize() > MAX_PROGRAM_SIZE) {
      throw new Error(`regex ${JSON.stringify(source)} is too complex (program size ${re.programSize()} > ${MAX_PROGRAM_SIZE})`);
    }
    return new Pattern(source, re);
  }

  /**
   * One pattern matching wherever any of `parts` matches: a single automaton pass per line instead
   * of one per pattern. Each part was already bounded by MAX_PROGRAM_SIZE when it was compiled.
   */
  static union(parts: readonly Pattern[]): Pattern {
    const [only] = parts;
    if (only && parts.length === 1) return only;
    const source = parts.map((p) => `(?:${p.source})`).join('|');
    return new Pattern(source, RE2JS.compile(source, RE2JS.MULTILINE));
  }

  /** Does the pattern match anywhere in `text`? (DFA fast path: no capture tracking.) */
  test(text: string): boolean {
    return this.re.test(text);
  }

  /**
   * Replaces every match in `text`. `$1`…`$99` and `$<name>` insert groups, `$&` the match, `$$`
   * a literal dollar (String.prototype.replace rules). A non-matching text is returned as is
   * without running the capture engine.
   */
  replaceAll(text: string, replacement: string): string {
    if (!this.re.test(text)) return text;
    return this.re.matcher(text).replaceAll(replacement);
  }

  groupCount(): number {
    return this.re.groupCount();
  }
}

/** CSI escape sequences (colours, cursor moves): what `strip_ansi` removes. */
// eslint-disable-next-line no-control-regex -- every CSI sequence starts with ESC (0x1b)
const ANSI_CSI = /\x1b\[[0-?]*[ -/]*[@-~]/g;

export function stripAnsi(text: string): string {
  return text.includes('\x1b[') ? text.replace(ANSI_CSI, '') : text;
}
