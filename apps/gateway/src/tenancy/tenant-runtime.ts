// A tenant runtime is everything the hot path needs about a tenant, built once per config
// version (never per request): its pipeline, store settings and the version it serves.
import { existsSync, readFileSync } from 'node:fs';
import {
  buildPipeline,
  parsePipelineYaml,
  resolveDocument,
  type BuiltConfig,
  type PipelineDocument,
} from '@context-guru/components';

export const DEFAULT_TENANT = 'default';
export const DEFAULT_PRESET = 'balanced';

export interface TenantRuntime {
  readonly id: string;
  readonly configVersion: number;
  readonly document: PipelineDocument;
  readonly built: BuiltConfig;
  /** Pipelines for `/compact?preset=` overrides, built lazily once per preset name. */
  readonly presetPipelines: Map<string, BuiltConfig>;
}

export function createTenantRuntime(id: string, document: PipelineDocument, configVersion: number): TenantRuntime {
  return { id, configVersion, document, built: buildPipeline(document), presetPipelines: new Map() };
}

/** A preset's pipeline for this tenant: the tenant's component blocks carry over. */
export function presetPipeline(t: TenantRuntime, preset: string): BuiltConfig {
  let built = t.presetPipelines.get(preset);
  if (!built) {
    built = buildPipeline({ preset, components: t.document.components, store: t.document.store });
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
