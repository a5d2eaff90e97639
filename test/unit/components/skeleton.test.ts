// skeleton, checked per seed language on a real source file: the skeleton parses cleanly, keeps every
// outer function by name, drops bodies of ≥ min_tokens, keeps smaller ones verbatim — and every
// grammar is loaded once per process however many runs there are.
import { Query, type Node } from 'web-tree-sitter';
import { countTokens, type Message } from '@context-guru/components';
import { skeletonComponent } from '../../../libs/components/src/offload/skeleton.component';
import { skeletonizeCode } from '../../../libs/components/src/offload/skeleton/elide';
import { type GrammarId, grammarLoadCount, parserFor } from '../../../libs/components/src/offload/skeleton/grammars';
import { LANGUAGES } from '../../../libs/components/src/offload/skeleton/languages';
import { testCtx } from '../../support/ctx';
import { loadFixtureCases } from '../../support/fixtures';

const MIN_TOKENS = 80;

// Independent of the component's node tables: plain tree-sitter queries naming functions and bodies.
const JS_QUERY = `
(function_declaration name: (identifier) @name body: (statement_block) @body) @fn
(method_definition name: (property_identifier) @name body: (statement_block) @body) @fn
(variable_declarator name: (identifier) @name value: (arrow_function body: (statement_block) @body)) @fn`;

const LANGS: ReadonlyArray<{ fixture: string; grammar: GrammarId; query: string }> = [
  {
    fixture: 'go-http-cache',
    grammar: 'go',
    query: `
(function_declaration name: (identifier) @name body: (block) @body) @fn
(method_declaration name: (field_identifier) @name body: (block) @body) @fn`,
  },
  { fixture: 'python-retry-client', grammar: 'python', query: '(function_definition name: (identifier) @name body: (block) @body) @fn' },
  { fixture: 'javascript-csv-stream', grammar: 'javascript', query: JS_QUERY },
  { fixture: 'typescript-rate-limiter', grammar: 'typescript', query: JS_QUERY },
  { fixture: 'tsx-search-panel', grammar: 'tsx', query: JS_QUERY },
  { fixture: 'rust-lexer', grammar: 'rust', query: '(function_item name: (identifier) @name body: (block) @body) @fn' },
  {
    fixture: 'java-order-service',
    grammar: 'java',
    query: `
(method_declaration name: (identifier) @name body: (block) @body) @fn
(constructor_declaration name: (identifier) @name body: (constructor_body) @body) @fn`,
  },
  {
    fixture: 'c-ring-buffer',
    grammar: 'c',
    query: `
(function_definition declarator: (function_declarator declarator: (identifier) @name) body: (compound_statement) @body) @fn
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)) body: (compound_statement) @body) @fn`,
  },
  {
    fixture: 'cpp-lru-cache',
    grammar: 'cpp',
    query: '(function_definition declarator: (function_declarator declarator: (_) @name) body: (compound_statement) @body) @fn',
  },
  {
    fixture: 'ruby-webhook-dispatcher',
    grammar: 'ruby',
    query: `
(method name: (_) @name body: (body_statement) @body) @fn
(singleton_method name: (_) @name body: (body_statement) @body) @fn`,
  },
  {
    fixture: 'php-session-store',
    grammar: 'php',
    query: `
(function_definition name: (name) @name body: (compound_statement) @body) @fn
(method_declaration name: (name) @name body: (compound_statement) @body) @fn`,
  },
  {
    fixture: 'csharp-inventory-service',
    grammar: 'c_sharp',
    query: `
(method_declaration name: (identifier) @name body: (block) @body) @fn
(constructor_declaration name: (identifier) @name body: (block) @body) @fn`,
  },
  {
    fixture: 'kotlin-feed-repository',
    grammar: 'kotlin',
    query: '(function_declaration (simple_identifier) @name (function_body) @body) @fn',
  },
  {
    fixture: 'swift-image-loader',
    grammar: 'swift',
    query: '(function_declaration name: (simple_identifier) @name body: (function_body) @body) @fn',
  },
  { fixture: 'scala-word-count', grammar: 'scala', query: '(function_definition name: (identifier) @name body: (_) @body) @fn' },
];

const cases = new Map(loadFixtureCases('skeleton').map((c) => [c.name, c]));

/** Runs the component with defaults over a fixture's messages; returns the rewritten messages. */
async function runFixture(fixture: string): Promise<Message[]> {
  const messages = structuredClone(cases.get(fixture)!.input.messages);
  await skeletonComponent.create(skeletonComponent.options(undefined, 'components.skeleton')).run(messages, testCtx());
  return messages;
}

function firstFence(text: string): string {
  const m = /^```[^\n]*\n([\s\S]*?)^```/m.exec(text);
  if (!m) throw new Error('no fenced block');
  return m[1]!;
}

function toolText(messages: Message[]): string {
  const t = messages.find((m) => m.role === 'tool')!.content;
  if (typeof t !== 'string') throw new Error('tool output is not a string');
  return t;
}

interface Fn {
  name: string;
  nameAt: number;
  body: Node;
  /** What the seed says may be elided: the body (for Python, the part after a docstring). */
  elidable: string;
}

function functionsOf(root: Node, query: Query, grammar: GrammarId): Fn[] {
  const byFn = new Map<number, Fn>();
  for (const match of query.matches(root)) {
    const get = (n: string) => match.captures.find((c) => c.name === n)?.node;
    const fn = get('fn')!;
    const name = get('name')!;
    const body = get('body')!;
    // A pattern without fields (Kotlin) can match several identifiers: the first one is the name.
    const seen = byFn.get(fn.id);
    if (seen && seen.nameAt <= name.startIndex) continue;
    byFn.set(fn.id, { name: name.text, nameAt: name.startIndex, body, elidable: elidable(body, grammar) });
  }
  return [...byFn.values()].sort((a, b) => a.body.startIndex - b.body.startIndex);
}

function elidable(body: Node, grammar: GrammarId): string {
  if (grammar !== 'python') return body.text;
  const stmts = body.namedChildren.filter((c): c is Node => c !== null && c.type !== 'comment');
  const doc = stmts[0]?.type === 'expression_statement' && stmts[0].namedChild(0)?.type === 'string';
  return doc ? body.text.slice((stmts[1]?.startIndex ?? body.endIndex) - body.startIndex) : body.text;
}

describe('skeleton', () => {
  // First in this file on purpose: the module registry is fresh, so nothing is loaded yet.
  it('loads each grammar once per process, however many (concurrent) runs', async () => {
    expect(grammarLoadCount()).toBe(0);
    // Concurrent first use: every run awaits the same memoised load instead of starting its own.
    await Promise.all([1, 2].flatMap(() => LANGS.map((l) => runFixture(l.fixture))));
    expect(grammarLoadCount()).toBe(LANGS.length);
    for (let round = 0; round < 3; round++) {
      for (const l of LANGS) await runFixture(l.fixture);
    }
    expect(grammarLoadCount()).toBe(LANGS.length);
  }, 60_000);

  describe.each(LANGS)('$grammar ($fixture)', ({ fixture, grammar, query: source }) => {
    it('keeps every outer function, drops big bodies, keeps small ones, and reparses cleanly', async () => {
      const parser = await parserFor(grammar);
      const query = new Query(parser.language!, source);
      const inputCode = firstFence(toolText(cases.get(fixture)!.input.messages));
      const out = await runFixture(fixture);
      const outputCode = firstFence(toolText(out));
      expect(toolText(out)).toMatch(/\n<<cg:[0-9a-f]{16}>> \[full source: call context_guru_expand\]$/);

      const before = parser.parse(inputCode)!;
      const after = parser.parse(outputCode)!;
      expect(before.rootNode.hasError).toBe(false);
      expect(after.rootNode.hasError).toBe(false);

      const all = functionsOf(before.rootNode, query, grammar);
      const big = all.filter((f) => countTokens(f.elidable) >= MIN_TOKENS);
      const inside = (f: Fn, g: Fn) => f !== g && f.body.startIndex >= g.body.startIndex && f.body.endIndex <= g.body.endIndex;
      // A function nested inside a replaced body vanishes with it; every other one must survive.
      const outer = all.filter((f) => !big.some((g) => inside(f, g)));
      expect(big.length).toBeGreaterThan(0);
      expect(outer.length).toBeGreaterThan(big.length);

      const kept = functionsOf(after.rootNode, query, grammar);
      expect(kept.map((f) => f.name)).toEqual(outer.map((f) => f.name));
      kept.forEach((k, i) => {
        const orig = outer[i]!;
        if (big.includes(orig)) {
          expect(outputCode).not.toContain(orig.body.text);
          expect(countTokens(k.elidable)).toBeLessThan(10);
        } else {
          expect(k.body.text).toBe(orig.body.text);
        }
      });
      before.delete();
      after.delete();
      query.delete();
    });
  });

  // Why skeleton needs no freeze or tail gate: parsing the same code again yields the same bytes.
  it('is a pure function of content: two independent parses give byte-identical skeletons', async () => {
    for (const l of LANGS) {
      const code = firstFence(toolText(cases.get(l.fixture)!.input.messages));
      const parser = await parserFor(l.grammar);
      const first = skeletonizeCode(parser, LANGUAGES[l.grammar], code, MIN_TOKENS);
      expect(first.ok).toBe(true);
      expect(skeletonizeCode(parser, LANGUAGES[l.grammar], code, MIN_TOKENS)).toEqual(first);
    }
  });

  it('reports reparse_failed and changes nothing when the skeleton would not parse', async () => {
    const code = [
      'object Report {',
      '  def describe(counts: Map[String, Int]): String = counts.size match {',
      '    case 0 => "no words were counted in the input file, so there is nothing to report yet"',
      '    case 1 => "exactly one distinct word was counted: " + counts.keys.mkString(", ")',
      '    case n => "counted " + n + " distinct words, the most frequent being " + counts.maxBy(e => e._2)._1',
      '  }',
      '}',
      '',
    ].join('\n');
    const parser = await parserFor('scala');
    expect(skeletonizeCode(parser, LANGUAGES.scala, code, MIN_TOKENS)).toMatchObject({ ok: true });
    // A placeholder the grammar cannot read must be caught by the reparse check.
    const broken = { ...LANGUAGES.scala, exprBody: '(((' };
    expect(skeletonizeCode(parser, broken, code, MIN_TOKENS)).toEqual({ ok: false, gate: 'reparse_failed' });
  });
});
