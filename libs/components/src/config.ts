// The strict pipeline document: `preset`, `pipeline`, `components`, `store`. A typo anywhere is an
// error naming the key; a preset's pipeline applies only when the document gives none, and a
// user's component block replaces the preset's block for that component as a whole.
import { Type, type Static } from '@sinclair/typebox';
import { parse as parseYaml } from 'yaml';
import { Pipeline } from './pipeline';
import { PRESETS, PRESET_NAMES, PRESET_OPTIONS } from './presets';
import { REGISTRY, findDefinition } from './registry';
import { ConfigError } from './shared/errors';
import { decodeOptions } from './shared/options';

export const StoreOptions = Type.Object({
  enabled: Type.Boolean({ default: true }),
  ttl_seconds: Type.Integer({ minimum: 1, default: 10000 }),
  max_entries: Type.Integer({ minimum: 1, default: 10000 }),
});

/**
 * Measured savings (issue 16): this share of *new* sessions is forwarded untouched for its whole
 * life, so the bill of treated and held-out sessions can be compared from provider usage.
 */
export const HoldoutOptions = Type.Object({
  fraction: Type.Number({ minimum: 0, maximum: 1 }),
});

/**
 * A candidate version of the same tenant's config, run off the hot path on a sampled share of
 * requests to report what it would have removed; it never changes a forwarded byte.
 */
export const ShadowOptions = Type.Object({
  version: Type.Integer({ minimum: 1 }),
  sample: Type.Number({ minimum: 0, maximum: 1, default: 0.05 }),
});

const PipelineDocumentSchema = Type.Object({
  preset: Type.Optional(Type.String()),
  pipeline: Type.Optional(Type.Array(Type.String())),
  components: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  store: Type.Optional(StoreOptions),
  holdout: Type.Optional(HoldoutOptions),
  shadow: Type.Optional(ShadowOptions),
});

export type PipelineDocument = Static<typeof PipelineDocumentSchema>;
export type StoreConfig = Static<typeof StoreOptions>;
export type HoldoutConfig = Static<typeof HoldoutOptions>;
export type ShadowConfig = Static<typeof ShadowOptions>;

export interface BuiltConfig {
  pipeline: Pipeline;
  names: string[];
  store: StoreConfig;
  preset?: string;
  holdout?: HoldoutConfig;
  shadow?: ShadowConfig;
}

export function parsePipelineDocument(raw: unknown, path = 'config'): PipelineDocument {
  const doc = decodeOptions(PipelineDocumentSchema, raw, path);
  if (doc.store) doc.store = decodeOptions(StoreOptions, doc.store, `${path}.store`);
  if (doc.holdout) doc.holdout = decodeOptions(HoldoutOptions, doc.holdout, `${path}.holdout`);
  if (doc.shadow) doc.shadow = decodeOptions(ShadowOptions, doc.shadow, `${path}.shadow`);
  return doc;
}

export function parsePipelineYaml(text: string, path = 'config'): PipelineDocument {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new ConfigError('invalid_yaml', path, `invalid YAML: ${(err as Error).message}`);
  }
  return parsePipelineDocument(raw ?? {}, path);
}

/** The config's component blocks over its preset's (only when the preset names the pipeline). */
function withPresetOptions(doc: PipelineDocument): Record<string, unknown> {
  const own: Record<string, unknown> = { ...(doc.components ?? {}) };
  const preset = doc.pipeline === undefined && doc.preset !== undefined ? PRESET_OPTIONS[doc.preset] : undefined;
  for (const [name, block] of Object.entries(preset ?? {})) {
    const mine = own[name];
    // A block that is not an object stays as written, so its own error is reported.
    if (mine === undefined || (typeof mine === 'object' && mine !== null && !Array.isArray(mine)))
      own[name] = { ...block, ...(mine ?? {}) };
  }
  return own;
}

/** Builds the pipeline once per config (never per request). */
export function buildPipeline(doc: PipelineDocument, path = 'config'): BuiltConfig {
  const preset = doc.preset === undefined ? [] : Object.hasOwn(PRESETS, doc.preset) ? PRESETS[doc.preset] : undefined;
  if (preset === undefined) {
    throw new ConfigError('unknown_preset', `${path}.preset`, `unknown preset "${doc.preset}" (known: ${PRESET_NAMES.join(', ')})`);
  }
  const names = [...(doc.pipeline ?? preset)];
  const seen = new Set<string>();
  const defs = names.map((name, i) => {
    const def = findDefinition(name);
    if (!def) {
      throw new ConfigError(
        'unknown_component',
        `${path}.pipeline[${i}]`,
        `unknown component "${name}" (known: ${REGISTRY.map((d) => d.name).join(', ')})`,
      );
    }
    if (seen.has(name)) throw new ConfigError('duplicate_component', `${path}.pipeline[${i}]`, `component "${name}" listed twice`);
    seen.add(name);
    return def;
  });
  const blocks = withPresetOptions(doc);
  const options = new Map<string, unknown>();
  for (const [name, block] of Object.entries(blocks)) {
    const def = findDefinition(name);
    if (!def) {
      throw new ConfigError(
        'unknown_component',
        `${path}.components.${name}`,
        `unknown component (known: ${REGISTRY.map((d) => d.name).join(', ')})`,
      );
    }
    options.set(name, def.options(block, `${path}.components.${name}`));
  }
  const components = defs.map((def) => {
    const name = def.name;
    const opts = options.has(name) ? options.get(name) : def.options(undefined, `${path}.components.${name}`);
    return def.create(opts);
  });
  const store = decodeOptions(StoreOptions, doc.store, `${path}.store`);
  const holdout = doc.holdout ? decodeOptions(HoldoutOptions, doc.holdout, `${path}.holdout`) : undefined;
  const shadow = doc.shadow ? decodeOptions(ShadowOptions, doc.shadow, `${path}.shadow`) : undefined;
  return { pipeline: new Pipeline(components), names, store, preset: doc.preset, holdout, shadow };
}

/** A preset name or an explicit pipeline list, plus an optional overriding document. */
export function resolveDocument(preset: string | undefined, override?: PipelineDocument): PipelineDocument {
  const base: PipelineDocument = preset ? { preset } : {};
  if (!override) return base;
  return {
    preset: override.preset ?? base.preset,
    pipeline: override.pipeline ?? base.pipeline,
    components: { ...(base.components ?? {}), ...(override.components ?? {}) },
    store: override.store ?? base.store,
    holdout: override.holdout,
    shadow: override.shadow,
  };
}
