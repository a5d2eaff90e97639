// The shipped filters are YAML data files beside src/ (libs/dsl/builtins), so the same relative
// path works from src under jest and from dist at run time. They load strictly, inline tests and
// all, once per process: a broken builtin fails loudly at first use, never silently.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ParsedDocument } from './document';
import { FilterSet } from './filter-set';
import { loadFilterDocument } from './load';

export const BUILTIN_DIR = join(__dirname, '..', 'builtins');

let docs: readonly ParsedDocument[] | undefined;
let set: FilterSet | undefined;

/** Builtin YAML files, sorted by name. */
export function builtinFiles(): string[] {
  return readdirSync(BUILTIN_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => join(BUILTIN_DIR, f));
}

export function builtinDocuments(): readonly ParsedDocument[] {
  docs ??= builtinFiles().map((path) => loadFilterDocument(readFileSync(path, 'utf8'), `builtin:${path.slice(BUILTIN_DIR.length + 1)}`));
  return docs;
}

export function builtinFilterSet(): FilterSet {
  set ??= new FilterSet(builtinDocuments());
  return set;
}
