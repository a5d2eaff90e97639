// A tenant runtime is everything the hot path needs about a tenant, built once per config
// version (never per request): its pipeline, store settings and the version it serves.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import {
  buildPipeline,
  type Pipeline,
  parsePipelineYaml,
  resolveDocument,
  type BuiltConfig,
  type PipelineDocument,
} from '@context-guru/components';

export const DEFAULT_TENANT = 'default';

/**
 * Whether a tenant's originals may be kept: its active version's `store.enabled` (never a
 * `/compact?preset=` pipeline's), on a store that can keep anything. When not, its offloaders run
 * as on a non-persistent store — no marker, no expand tool, nothing stashed (docs/security.md).
 */
export function keepsOriginals(tenant: Pick<TenantRuntime, 'built'>, store: { readonly persistent: boolean }): boolean {
  return store.persistent && tenant.built.store.enabled;
}
// What a tenant with no configuration runs (`npm start` with nothing set): see docs/cache.md.
const DEFAULT_PRESET = 'auto';

export interface TenantRuntime {
  readonly id: string;
  readonly configVersion: number;
  readonly document: PipelineDocument;
  readonly built: BuiltConfig;
  /** Pipelines for `/compact?preset=` overrides, built lazily once per preset name. */
  readonly presetPipelines: Map<string, BuiltConfig>;
  /**
   * Another version of this tenant's config may have rewritten a live session, so even an empty
   * pipeline must decode and replay what was forwarded (a transparent pass-through would bust).
   */
  readonly replays: boolean;
  /** The candidate version this tenant evaluates in shadow (apps/gateway/src/shadow), when its document names one. */
  readonly shadow?: ShadowCandidate;
}

export interface ShadowCandidate {
  version: number;
  /** The share of requests it is evaluated on. */
  sample: number;
  /** The candidate's own runtime, built once with the active one; its own shadow and holdout are dropped. */
  runtime: TenantRuntime;
}

const revisions = new WeakMap<Pipeline, string>();

/**
 * What a pipeline was built from, the same on every replica (a hash of its document): a session's
 * forwarded bytes made under another revision are replayed, not re-derived (forwarded-replay.ts).
 */
export function revisionOf(pipeline: Pipeline): string {
  return revisions.get(pipeline) ?? 'unversioned';
}

function build(document: PipelineDocument): BuiltConfig {
  const built = buildPipeline(document);
  // Naming a shadow candidate changes nothing this pipeline forwards: not part of its revision.
  const forwarding: PipelineDocument = { ...document };
  delete forwarding.shadow;
  revisions.set(built.pipeline, createHash('sha256').update(JSON.stringify(forwarding)).digest('hex').slice(0, 16));
  return built;
}

export function createTenantRuntime(
  id: string,
  document: PipelineDocument,
  configVersion: number,
  replays = false,
  shadow?: ShadowCandidate,
): TenantRuntime {
  return { id, configVersion, document, built: build(document), presetPipelines: new Map(), replays, ...(shadow ? { shadow } : {}) };
}

/**
 * The runtime a shadow candidate runs as: the same tenant, its document without `shadow` and
 * `holdout` (a candidate only ever compresses; it never names a candidate or holds sessions out).
 */
export function candidateRuntime(id: string, document: PipelineDocument, version: number): TenantRuntime {
  const own: PipelineDocument = { ...document };
  delete own.shadow;
  delete own.holdout;
  return createTenantRuntime(id, own, version);
}

/** A preset's pipeline for this tenant: the tenant's component blocks carry over. */
export function presetPipeline(t: TenantRuntime, preset: string): BuiltConfig {
  let built = t.presetPipelines.get(preset);
  if (!built) {
    built = build({ preset, components: t.document.components, store: t.document.store });
    t.presetPipelines.set(preset, built);
  }
  return built;
}

/** `CONFIG` is a path to a YAML document, or the YAML itself when it does not name a file. */
export function loadConfigDocument(preset: string | undefined, config: string | undefined): PipelineDocument {
  let override: PipelineDocument | undefined;
  if (config) {
    const isFile = !config.includes('\n') && existsSync(config);
    override = parsePipelineYaml(isFile ? readFileSync(config, 'utf8') : config, isFile ? config : 'CONFIG');
  }
  return resolveDocument(preset ?? (override?.preset || override?.pipeline ? undefined : DEFAULT_PRESET), override);
}
