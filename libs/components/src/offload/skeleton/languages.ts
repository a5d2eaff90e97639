// Per-language node tables: which tree-sitter nodes are functions, where their body is, and what
// placeholder replaces it so the result still parses with the same grammar.
import type { GrammarId } from './grammars';

/**
 * brace: the body `{ … }` becomes `{ /* … *\/ }` — a comment, because a bare `…` is a lexer error
 * in most C-family grammars. python: the body (after a docstring) becomes an indented `...`.
 * ruby: the body between the def line and `end` becomes `…` (a valid Ruby identifier).
 */
type PlaceholderStyle = 'brace' | 'python' | 'ruby';

export interface LanguageSpec {
  readonly style: PlaceholderStyle;
  /** Named function-like nodes (declarations, methods, constructors, accessors): always candidates. */
  readonly functions: ReadonlySet<string>;
  /** Anonymous functions: candidates only when assigned to a name or member (see `assigned`). */
  readonly closures: ReadonlySet<string>;
  /** Parents that make a closure "assigned"; a callback argument is descended into instead. */
  readonly assigned: ReadonlySet<string>;
  /** Body node types looked up among named children when there is no `body` field. */
  readonly bodyTypes: ReadonlySet<string>;
  /** Nodes that are their own body (Swift computed properties: `var x: T { … }`). */
  readonly selfBody: ReadonlySet<string>;
  /** Placeholder for a body that is a bare expression (`def f = expr`); absent = leave it. */
  readonly exprBody?: string;
  /** Text the grammar needs before the code when the block omits it (PHP's `<?php`). */
  readonly prologue?: { readonly present: RegExp; readonly text: string };
}

const set = (...xs: string[]): ReadonlySet<string> => new Set(xs);
const NONE = set();

export const BRACE_PLACEHOLDER = '{ /* … */ }';
export const PYTHON_PLACEHOLDER = '...';
export const RUBY_PLACEHOLDER = '…';

const ecmascript: LanguageSpec = {
  style: 'brace',
  functions: set(
    'function_declaration',
    'generator_function_declaration',
    'method_definition',
    'function_expression',
    'function',
    'generator_function',
  ),
  closures: set('arrow_function'),
  assigned: set('variable_declarator', 'assignment_expression', 'pair', 'field_definition', 'public_field_definition'),
  bodyTypes: NONE,
  selfBody: NONE,
};

const cFamily = (extra: Partial<LanguageSpec>): LanguageSpec => ({
  style: 'brace',
  functions: set('function_definition'),
  closures: NONE,
  assigned: NONE,
  bodyTypes: NONE,
  selfBody: NONE,
  ...extra,
});

export const LANGUAGES: Readonly<Record<GrammarId, LanguageSpec>> = {
  go: {
    style: 'brace',
    functions: set('function_declaration', 'method_declaration'),
    closures: set('func_literal'),
    assigned: set('var_spec', 'const_spec', 'short_var_declaration', 'assignment_statement', 'keyed_element'),
    bodyTypes: NONE,
    selfBody: NONE,
  },
  python: {
    style: 'python',
    functions: set('function_definition'),
    closures: NONE,
    assigned: NONE,
    bodyTypes: NONE,
    selfBody: NONE,
  },
  javascript: ecmascript,
  typescript: ecmascript,
  tsx: ecmascript,
  rust: {
    style: 'brace',
    functions: set('function_item'),
    closures: set('closure_expression'),
    assigned: set('let_declaration', 'assignment_expression', 'field_initializer', 'static_item', 'const_item'),
    bodyTypes: NONE,
    selfBody: NONE,
  },
  java: {
    style: 'brace',
    functions: set('method_declaration', 'constructor_declaration', 'compact_constructor_declaration'),
    closures: set('lambda_expression'),
    assigned: set('variable_declarator', 'assignment_expression'),
    bodyTypes: NONE,
    selfBody: NONE,
  },
  c: cFamily({}),
  cpp: cFamily({ closures: set('lambda_expression'), assigned: set('init_declarator', 'assignment_expression') }),
  ruby: {
    style: 'ruby',
    functions: set('method', 'singleton_method'),
    closures: NONE,
    assigned: NONE,
    bodyTypes: NONE,
    selfBody: NONE,
  },
  php: {
    style: 'brace',
    functions: set('function_definition', 'method_declaration'),
    closures: set('anonymous_function_creation_expression', 'anonymous_function'),
    assigned: set('assignment_expression', 'array_element_initializer', 'property_element'),
    bodyTypes: NONE,
    selfBody: NONE,
    prologue: { present: /<\?php|<\?=|^\s*<\?/, text: '<?php\n' },
  },
  c_sharp: {
    style: 'brace',
    functions: set(
      'method_declaration',
      'constructor_declaration',
      'destructor_declaration',
      'operator_declaration',
      'conversion_operator_declaration',
      'local_function_statement',
      'accessor_declaration',
    ),
    closures: set('lambda_expression', 'anonymous_method_expression'),
    assigned: set('variable_declarator', 'equals_value_clause', 'assignment_expression'),
    bodyTypes: NONE,
    selfBody: NONE,
  },
  kotlin: {
    style: 'brace',
    functions: set('function_declaration', 'secondary_constructor', 'anonymous_initializer', 'getter', 'setter'),
    closures: set('anonymous_function'),
    assigned: set('property_declaration', 'assignment'),
    bodyTypes: set('function_body', 'block'),
    selfBody: NONE,
  },
  swift: {
    style: 'brace',
    functions: set('function_declaration', 'init_declaration', 'deinit_declaration', 'subscript_declaration'),
    closures: NONE,
    assigned: NONE,
    bodyTypes: set('function_body', 'computed_property'),
    selfBody: set('computed_property'),
  },
  scala: {
    style: 'brace',
    functions: set('function_definition'),
    closures: NONE,
    assigned: NONE,
    bodyTypes: NONE,
    selfBody: NONE,
    exprBody: BRACE_PLACEHOLDER,
  },
};

/** Wrappers between a closure and the node that names it (`x, y := func(){…}, 1`). */
export const TRANSPARENT_PARENTS: ReadonlySet<string> = set(
  'expression_list',
  'parenthesized_expression',
  'literal_element',
  'equals_value_clause',
);

// Fence tags and common aliases. `h` is ambiguous: C first, C++ when the C grammar rejects it.
const ALIASES: Readonly<Record<string, readonly GrammarId[]>> = {
  go: ['go'],
  golang: ['go'],
  python: ['python'],
  py: ['python'],
  python3: ['python'],
  javascript: ['javascript'],
  js: ['javascript'],
  jsx: ['javascript'],
  mjs: ['javascript'],
  cjs: ['javascript'],
  node: ['javascript'],
  typescript: ['typescript'],
  ts: ['typescript'],
  mts: ['typescript'],
  cts: ['typescript'],
  tsx: ['tsx'],
  rust: ['rust'],
  rs: ['rust'],
  java: ['java'],
  c: ['c'],
  h: ['c', 'cpp'],
  cpp: ['cpp'],
  'c++': ['cpp'],
  cc: ['cpp'],
  cxx: ['cpp'],
  hpp: ['cpp'],
  hh: ['cpp'],
  hxx: ['cpp'],
  ruby: ['ruby'],
  rb: ['ruby'],
  php: ['php'],
  c_sharp: ['c_sharp'],
  csharp: ['c_sharp'],
  'c#': ['c_sharp'],
  cs: ['c_sharp'],
  kotlin: ['kotlin'],
  kt: ['kotlin'],
  kts: ['kotlin'],
  swift: ['swift'],
  scala: ['scala'],
  sc: ['scala'],
};

/** Grammars to try, in order, for a fence tag; undefined for a language we do not parse. */
export function grammarsForTag(tag: string): readonly GrammarId[] | undefined {
  const key = tag.toLowerCase();
  return Object.hasOwn(ALIASES, key) ? ALIASES[key] : undefined;
}
