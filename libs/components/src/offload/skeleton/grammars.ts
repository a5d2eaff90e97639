// Grammar loading happens once per process: one Parser.init(), one Language.load per grammar,
// each memoised as a promise, so no request ever pays for (or races) a second load.
import { dirname, join } from 'node:path';
import { Language, Parser } from 'web-tree-sitter';

export type GrammarId =
  | 'go'
  | 'python'
  | 'javascript'
  | 'typescript'
  | 'tsx'
  | 'rust'
  | 'java'
  | 'c'
  | 'cpp'
  | 'ruby'
  | 'php'
  | 'c_sharp'
  | 'kotlin'
  | 'swift'
  | 'scala';

let runtime: Promise<void> | undefined;
const parsers = new Map<GrammarId, Promise<Parser>>();
const ready = new Map<GrammarId, Parser>();
let loads = 0;
let linking: Promise<unknown> = Promise.resolve();

/**
 * Grammars whose tree-sitter-wasms build fails on ordinary real-world code, taken from the
 * language's own package (which ships its .wasm): tree-sitter-wasms' Scala grammar rejects a
 * block lambda (`xs.map { x => … }`) and its C# grammar predates primary constructors and
 * file-scoped namespaces, so real files of both never parsed.
 */
const OFFICIAL: Partial<Record<GrammarId, { pkg: string; wasm: string }>> = {
  scala: { pkg: 'tree-sitter-scala', wasm: 'tree-sitter-scala.wasm' },
  c_sharp: { pkg: 'tree-sitter-c-sharp', wasm: 'tree-sitter-c_sharp.wasm' },
};

/** Prebuilt grammars (tree-sitter-wasms, or the language's own package): no native build, no download. */
function grammarPath(id: GrammarId): string {
  const own = OFFICIAL[id];
  if (own) return join(dirname(require.resolve(`${own.pkg}/package.json`)), own.wasm);
  return join(dirname(require.resolve('tree-sitter-wasms/package.json')), 'out', `tree-sitter-${id}.wasm`);
}

/**
 * How many times a grammar .wasm was actually loaded in this process (tests assert it stays at one per language).
 * @internal exported for tests
 */
export function grammarLoadCount(): number {
  return loads;
}

/**
 * The parser for a grammar, created on first use. The returned Parser is shared: parse() is
 * synchronous, so callers on the single JS thread never interleave inside it.
 */
export function parserFor(id: GrammarId): Promise<Parser> {
  let p = parsers.get(id);
  if (!p) {
    p = create(id);
    parsers.set(id, p);
  }
  return p;
}

async function create(id: GrammarId): Promise<Parser> {
  runtime ??= Parser.init();
  await runtime;
  // Loads run one after another: the runtime links each grammar module into shared state, and two
  // Language.load calls in flight at once resolve each other's symbols wrongly ("bad export type").
  const load = linking.then(() => {
    loads += 1;
    return Language.load(grammarPath(id));
  });
  linking = load.catch(() => undefined);
  const parser = new Parser();
  parser.setLanguage(await load);
  ready.set(id, parser);
  return parser;
}

/** The parser for a grammar whose load has completed (await parserFor first), else undefined. */
export function loadedParser(id: GrammarId): Parser | undefined {
  return ready.get(id);
}
