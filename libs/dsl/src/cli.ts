#!/usr/bin/env node
// context-guru-dsl verify <file...>: loads filter documents strictly, runs their inline tests and
// prints every failure as expected-vs-actual. Exit status 0 only when everything loads and passes.
import { readFileSync } from 'node:fs';
import { builtinFiles } from './builtins';
import type { ParsedDocument } from './document';
import { DslError } from './errors';
import { FilterSet } from './filter-set';
import type { TestFailure } from './inline-tests';
import { checkFilterDocument } from './load';

const USAGE = 'usage: context-guru-dsl verify [--builtins] <file.yaml...>';

const indent = (s: string): string =>
  s === ''
    ? '    (empty)'
    : s
        .replace(/\n+$/, '')
        .split('\n')
        .map((l) => `    ${l}`)
        .join('\n');

function formatFailure(f: TestFailure): string {
  const head = `FAIL ${f.source}:${f.line}: filter "${f.filter}" test "${f.test}"`;
  if (f.reason === 'not_selected') return `${head}\n  not selected: ${f.actual}`;
  return `${head}\n  expected:\n${indent(f.expected)}\n  actual:\n${indent(f.actual)}`;
}

/** Runs the CLI; returns the exit status. `write` receives each output line. */
export function runCli(args: readonly string[], write: (line: string) => void): number {
  const [cmd, ...rest] = args;
  if (cmd !== 'verify') {
    write(USAGE);
    return 2;
  }
  const paths = rest.filter((a) => a !== '--builtins');
  if (rest.includes('--builtins')) paths.unshift(...builtinFiles());
  if (paths.length === 0) {
    write(USAGE);
    return 2;
  }
  let bad = 0;
  let tests = 0;
  const docs: ParsedDocument[] = [];
  for (const path of paths) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      write(`ERROR ${path}: cannot read: ${(err as Error).message}`);
      bad++;
      continue;
    }
    const check = checkFilterDocument(text, path);
    if (check.error) {
      write(`ERROR ${check.error.message}`);
      bad++;
      continue;
    }
    docs.push(check.doc);
    tests += check.doc.tests.length;
    for (const f of check.failures) write(formatFailure(f));
    bad += check.failures.length;
  }
  try {
    new FilterSet(docs);
  } catch (err) {
    if (!(err instanceof DslError)) throw err;
    write(`ERROR ${err.message}`);
    bad++;
  }
  const filters = docs.reduce((n, d) => n + d.filters.length, 0);
  write(`${bad === 0 ? 'ok' : 'FAILED'}: ${paths.length} document(s), ${filters} filter(s), ${tests} test(s), ${bad} problem(s)`);
  return bad === 0 ? 0 : 1;
}

if (require.main === module) {
  process.exitCode = runCli(process.argv.slice(2), (line) => process.stdout.write(`${line}\n`));
}
