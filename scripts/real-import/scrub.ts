// What the import removes from every text it records, and what it caps. Each rule counts its hits
// so index.json can say, per source, what was changed. Rules are narrow on purpose: a session's
// content is the measurement, so only what must not be committed (secrets, personal paths) or
// what the gateway's environment should never be asked to reach (registry and mirror hosts) moves.

/** index.json's cap on one tool output; a longer one keeps its head and tail around a note. */
export const MAX_TOOL_OUTPUT_CHARS = 48_000;

interface Rule {
  name: string;
  pattern: RegExp;
  replace: string | ((match: string, ...groups: string[]) => string);
}

const RULES: Rule[] = [
  // eslint-disable-next-line no-control-regex
  { name: 'ANSI escape codes removed', pattern: /\u001b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\u0007]*\u0007|[()][A-Z0-9])/g, replace: '' },
  {
    name: 'package registry hosts -> registry.npm.local',
    pattern:
      /\b(?:registry\.npmjs\.org|registry\.yarnpkg\.com|pypi\.org|pypi\.python\.org|files\.pythonhosted\.org|conda\.anaconda\.org|repo\.anaconda\.com|crates\.io|proxy\.golang\.org|rubygems\.org|repo1?\.maven\.org)\b/g,
    replace: 'registry.npm.local',
  },
  {
    name: 'Debian mirror hosts -> deb.debian.local',
    pattern:
      /\b(?:deb\.debian\.org|security\.debian\.org|ftp\.[a-z]{2}\.debian\.org|(?:[a-z]{2}\.)?archive\.ubuntu\.com|security\.ubuntu\.com|ports\.ubuntu\.com)\b/g,
    replace: 'deb.debian.local',
  },
  {
    name: 'home directory paths -> /home/user',
    pattern: /(?<![\w.-])\/(Users|home)\/(?!user\/)[A-Za-z0-9._-]+(?=\/)/g,
    replace: (_m, root: string) => `/${root}/user`,
  },
  {
    name: 'private keys redacted',
    pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
    replace: '[REDACTED PRIVATE KEY]',
  },
  {
    name: 'secret-looking tokens redacted',
    pattern:
      /\b(?:sk-(?:ant-)?[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35})\b/g,
    replace: '[REDACTED]',
  },
  {
    name: 'secret-looking assignments redacted',
    pattern: /\b((?:api[_-]?key|secret[_-]?key|access[_-]?token|auth[_-]?token|password)["']?\s*[:=]\s*["']?)([A-Za-z0-9_\-/+=]{16,})/gi,
    replace: (_m, key: string) => `${key}[REDACTED]`,
  },
];

/** Scrubs texts and counts, per rule, how many replacements it made. */
export class Scrubber {
  readonly hits = new Map<string, number>();
  capped = 0;

  text(input: string): string {
    let out = input;
    for (const rule of RULES) {
      out = out.replace(rule.pattern, (...args: unknown[]) => {
        this.hits.set(rule.name, (this.hits.get(rule.name) ?? 0) + 1);
        const [match, ...groups] = args as string[];
        return typeof rule.replace === 'string' ? rule.replace : rule.replace(match ?? '', ...groups);
      });
    }
    return out;
  }

  /** A tool output, scrubbed, then capped at MAX_TOOL_OUTPUT_CHARS. */
  toolOutput(input: string): string {
    const out = this.text(input);
    if (out.length <= MAX_TOOL_OUTPUT_CHARS) return out;
    this.capped++;
    const note = `\n[... ${out.length - MAX_TOOL_OUTPUT_CHARS} characters cut by the corpus import (cap ${MAX_TOOL_OUTPUT_CHARS}) ...]\n`;
    const keep = Math.floor((MAX_TOOL_OUTPUT_CHARS - note.length) / 2);
    return `${out.slice(0, keep)}${note}${out.slice(out.length - keep)}`;
  }

  /** What changed, for index.json (rule: count). */
  report(): string[] {
    const out = [...this.hits].map(([rule, n]) => `${rule} (${n})`);
    if (this.capped) out.push(`${this.capped} tool output(s) capped at ${MAX_TOOL_OUTPUT_CHARS} chars`);
    return out;
  }
}
