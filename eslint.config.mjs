// ESLint owns correctness and size budgets; Prettier owns layout (`npm run format:check`), so no
// rule here is about formatting (neither recommended set below enables one).
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import { layering } from './eslint/layering.mjs';

// Non-blank, non-comment lines per file, and cyclomatic complexity per function.
const FILE_LINES = 300;
const TEST_FILE_LINES = 400;
const COMPLEXITY = 20;

export default defineConfig(
  {
    ignores: [
      '**/node_modules/',
      '**/dist/',
      'coverage/',
      'test-output/',
      '.tools/',
      'pglite/',
      'charts/',
      'apps/admin/ui/vendor/',
      'test/fixtures/',
      'libs/components/test/fixtures/',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'max-lines': ['error', { max: FILE_LINES, skipBlankLines: true, skipComments: true }],
      complexity: ['error', { max: COMPLEXITY }],
      // `_`-prefixed names are the deliberate way to say "unused on purpose" (a positional
      // parameter an interface requires, a rest sibling that drops a key).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // Two type-aware rules for product code only: a promise nobody awaits or catches, and a
    // rejection with something that is not an Error. The root tsconfig maps every package to its
    // source, so the types do not depend on a build; they cost ~10 s of CPU on a cold run (the
    // content cache keeps warm runs at seconds).
    files: ['apps/*/src/**/*.ts', 'libs/*/src/**/*.ts'],
    languageOptions: { parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/prefer-promise-reject-errors': 'error',
    },
  },
  {
    // Product code checks what an index or a lookup may not hold (noUncheckedIndexedAccess types it);
    // a `!` would hide exactly that. Tests and benchmarks may assert their own fixtures' shape.
    files: ['apps/*/src/**/*.ts', 'libs/*/src/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'error' },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: TEST_FILE_LINES, skipBlankLines: true, skipComments: true }],
      // Black-box tests read JSON answers whose shape is what they assert; `any` stays out of the product.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['**/*.cjs', 'jest.config.js', 'bench/procs/**', 'scripts/**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['apps/admin/ui/**/*.js'],
    languageOptions: { sourceType: 'module', globals: { ...globals.browser, uPlot: 'readonly' } },
  },
  {
    // The folder order inside the engine and the gateway, and no import cycle in any package
    // (eslint/layering.mjs; test/unit/lint/layering.test.ts plants one of each).
    files: ['apps/*/src/**/*.ts', 'libs/*/src/**/*.ts'],
    plugins: { layering },
    rules: { 'layering/folder-order': 'error', 'layering/no-cycle': 'error' },
  },
  {
    // Between packages: libs -> engine -> gateway -> embedded; the admin and the benchmarks run the
    // engine, never the gateway's internals.
    files: ['libs/*/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@context-guru/gateway', '@context-guru/admin', '@context-guru/embedded', '**/apps/**'],
              message: 'A library never imports an app.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['apps/admin/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@context-guru/gateway', '@context-guru/gateway/**', '**/gateway/src/**'],
              message: 'The admin runs the engine (@context-guru/engine), never the gateway.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['bench/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/apps/*/src/**', '**/libs/*/src/**'],
              message: 'Benchmarks import packages (@context-guru/engine), never their sources by path.',
            },
          ],
        },
      ],
    },
  },
);
