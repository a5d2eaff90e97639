// What changed between two versions of a pipeline document, in the terms an operator thinks in:
// components added to / removed from the effective pipeline, options whose decoded value changed
// (defaults filled in, so `{}` and the default compare equal), inline cmdfilter filters by name.
import { buildPipeline, findDefinition, type PipelineDocument } from '@context-guru/components';
import { parseFilterDocument } from '@context-guru/dsl';
import { canonicalJson } from '@context-guru/storage';

interface OptionChange {
  component: string;
  key: string;
  from: unknown;
  to: unknown;
}

export interface ConfigDiff {
  preset: { from: string | null; to: string | null };
  components: { added: string[]; removed: string[]; order_changed: boolean };
  options: OptionChange[];
  filters: { added: string[]; removed: string[] };
  store: { from: unknown; to: unknown } | null;
}

function decodedOptions(doc: PipelineDocument, name: string): Record<string, unknown> {
  const def = findDefinition(name);
  const opts = def ? def.options(doc.components?.[name], `components.${name}`) : doc.components?.[name];
  return opts && typeof opts === 'object' ? (opts as Record<string, unknown>) : {};
}

/** Filter names of the inline cmdfilter documents (a document that does not parse counts by its hash). */
function filterNames(doc: PipelineDocument): Set<string> {
  const block = doc.components?.cmdfilter as { filters?: unknown } | undefined;
  const out = new Set<string>();
  const texts = Array.isArray(block?.filters) ? (block.filters as unknown[]) : [];
  texts.forEach((text, i) => {
    if (typeof text !== 'string') return;
    try {
      for (const f of parseFilterDocument(text, `filters[${i}]`).filters) out.add(f.name);
    } catch {
      out.add(`filters[${i}]`);
    }
  });
  return out;
}

export function diffDocuments(from: PipelineDocument, to: PipelineDocument): ConfigDiff {
  const a = buildPipeline(from).names;
  const b = buildPipeline(to).names;
  const options: OptionChange[] = [];
  for (const name of b.filter((n) => a.includes(n))) {
    const x = decodedOptions(from, name);
    const y = decodedOptions(to, name);
    for (const key of [...new Set([...Object.keys(x), ...Object.keys(y)])].sort()) {
      if (key === 'filters' && name === 'cmdfilter') continue; // reported by name below
      if (canonicalJson(x[key]) !== canonicalJson(y[key])) options.push({ component: name, key, from: x[key] ?? null, to: y[key] ?? null });
    }
  }
  const fa = filterNames(from);
  const fb = filterNames(to);
  const common = b.filter((n) => a.includes(n));
  return {
    preset: { from: from.preset ?? null, to: to.preset ?? null },
    components: {
      added: b.filter((n) => !a.includes(n)),
      removed: a.filter((n) => !b.includes(n)),
      order_changed: canonicalJson(a.filter((n) => common.includes(n))) !== canonicalJson(common),
    },
    options,
    filters: { added: [...fb].filter((n) => !fa.has(n)).sort(), removed: [...fa].filter((n) => !fb.has(n)).sort() },
    store:
      canonicalJson(from.store ?? null) === canonicalJson(to.store ?? null) ? null : { from: from.store ?? null, to: to.store ?? null },
  };
}
