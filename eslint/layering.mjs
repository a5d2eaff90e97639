// The folder order of the two packages with inner layers, as lint rules (`npm run lint`):
// - layering/folder-order: a file imports only from its own layer or a lower one (a back-running
//   import, or a folder the order does not name, is an error);
// - layering/no-cycle: no file reaches itself through static imports, type-only ones included.
// Both read relative imports only (other packages are separate workspaces, checked by
// no-restricted-imports in eslint.config.mjs). A `require()` is not followed: the one lazy
// require (observability/tracing.ts loads the OpenTelemetry SDK only when tracing is on) is the
// documented exception.
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

/**
 * Lowest first. An entry is a folder directly under the package's src, or a file at its top.
 * A layer may import its own entries and every entry of a lower layer.
 */
export const FOLDER_ORDER = {
  'libs/engine/src': [
    ['engine.types.ts', 'logger.ts'],
    ['shared'],
    ['env'],
    ['wire'],
    ['expand'],
    ['report'],
    ['session'],
    ['tenancy'],
    ['prepare'],
    ['prepare-request.ts', 'upstream-body.ts'],
    ['detached'],
    ['index.ts'],
  ],
  'apps/gateway/src': [
    ['http'],
    ['model'],
    ['observability'],
    ['tenancy'],
    ['holdout'],
    ['expand'],
    ['shadow'],
    ['cloud'],
    ['env.ts', 'gateway-context.ts', 'gateway.tokens.ts'],
    ['ops'],
    ['proxy'],
    ['server.ts', 'shutdown.ts', 'gateway.module.ts', 'main.ts', 'index.ts'],
  ],
};

const PACKAGES = Object.keys(FOLDER_ORDER).map((src) => ({ src, abs: join(ROOT, src) }));

function packageOf(file) {
  return PACKAGES.find((p) => file.startsWith(p.abs + sep));
}

/** The entry (top folder or top file) a file of the package belongs to. */
function entryOf(pkg, file) {
  return relative(pkg.abs, file).split(sep)[0];
}

function layerOf(pkg, entry) {
  return FOLDER_ORDER[pkg.src].findIndex((layer) => layer.includes(entry));
}

function isFile(path) {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function resolveRelative(from, spec) {
  const base = resolve(dirname(from), spec);
  return [`${base}.ts`, join(base, 'index.ts'), base].find(isFile);
}

const STATIC_IMPORT = /^\s*(?:import|export)\s[^;]*?\sfrom\s+['"](\.{1,2}\/[^'"]+)['"]/gm;
const depsMemo = new Map();

/** A file's static relative imports, re-read when it changes. */
function depsOf(file) {
  let mtime;
  try {
    mtime = statSync(file).mtimeMs;
  } catch {
    return [];
  }
  const memo = depsMemo.get(file);
  if (memo && memo.mtime === mtime) return memo.deps;
  const text = readFileSync(file, 'utf8');
  const deps = [...text.matchAll(STATIC_IMPORT)].map((m) => resolveRelative(file, m[1])).filter(Boolean);
  depsMemo.set(file, { mtime, deps });
  return deps;
}

/** A path of imports from `start` back to `goal`, or null. */
function pathBack(start, goal) {
  const seen = new Set();
  const walk = (file, trail) => {
    if (file === goal) return trail;
    if (seen.has(file)) return null;
    seen.add(file);
    for (const next of depsOf(file)) {
      const found = walk(next, [...trail, next]);
      if (found) return found;
    }
    return null;
  };
  return walk(start, [start]);
}

function sources(context, check) {
  const visit = (node) => {
    const spec = node.source?.value;
    if (typeof spec === 'string' && spec.startsWith('.')) check(node.source, spec);
  };
  return { ImportDeclaration: visit, ExportNamedDeclaration: visit, ExportAllDeclaration: visit };
}

const folderOrder = {
  meta: {
    type: 'problem',
    docs: { description: 'Imports follow the folder order of the package (eslint/layering.mjs FOLDER_ORDER)' },
    messages: {
      backward: "'{{from}}' (layer {{fromLayer}}) may not import '{{to}}' (layer {{toLayer}}): the folder order is {{order}}.",
      unplaced: "'{{entry}}' is not in the folder order of {{pkg}}: place it in FOLDER_ORDER (eslint/layering.mjs).",
    },
    schema: [],
  },
  create(context) {
    const file = context.filename;
    const pkg = packageOf(file);
    if (!pkg) return {};
    const from = entryOf(pkg, file);
    const fromLayer = layerOf(pkg, from);
    if (fromLayer < 0) {
      return { Program: (node) => context.report({ node, messageId: 'unplaced', data: { entry: from, pkg: pkg.src } }) };
    }
    const order = FOLDER_ORDER[pkg.src].map((l) => l.join(' ')).join(' < ');
    return sources(context, (node, spec) => {
      const target = resolveRelative(file, spec);
      if (!target || packageOf(target) !== pkg) return;
      const to = entryOf(pkg, target);
      const toLayer = layerOf(pkg, to);
      if (toLayer > fromLayer) context.report({ node, messageId: 'backward', data: { from, to, fromLayer, toLayer, order } });
    });
  },
};

const noCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'No file reaches itself through static relative imports (type-only ones included)' },
    messages: { cycle: 'Import cycle: {{path}}.' },
    schema: [],
  },
  create(context) {
    const file = context.filename;
    return sources(context, (node, spec) => {
      const target = resolveRelative(file, spec);
      if (!target) return;
      const back = pathBack(target, file);
      if (back) context.report({ node, messageId: 'cycle', data: { path: [file, ...back].map((f) => relative(ROOT, f)).join(' → ') } });
    });
  },
};

export const layering = { rules: { 'folder-order': folderOrder, 'no-cycle': noCycle } };
