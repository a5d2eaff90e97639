// Reads the code table of one package from docs/errors.md (the rows under its `## Heading`), so a
// package's anti-drift test compares the page with the table in its source.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface DocumentedCode {
  code: string;
  /** The second column when it is an HTTP status (the gateway's table), else undefined. */
  status?: number;
}

export function documentedCodes(heading: string): DocumentedCode[] {
  const doc = readFileSync(path.join(__dirname, '../../docs/errors.md'), 'utf8');
  const start = doc.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/errors.md has no section "## ${heading}"`);
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^\| `([a-z0-9_]+)` \| ([^|]*)\|/gm)].map((m) => {
    const second = m[2]!.trim();
    return /^\d{3}$/.test(second) ? { code: m[1]!, status: Number(second) } : { code: m[1]! };
  });
}
