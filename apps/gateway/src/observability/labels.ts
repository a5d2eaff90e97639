// Label values derived from a tenant runtime, bounded by construction: a preset name from the
// registry's list, or `custom` for a document that spells its own pipeline.
import { type TenantRuntime } from '@context-guru/engine';

export function presetLabel(t: TenantRuntime): string {
  return t.document.pipeline || !t.built.preset ? 'custom' : t.built.preset;
}

const MODEL_HEAD = 1024;
const MODEL_KEY = /"model"\s*:\s*"([^"\\]{1,128})"/;

/**
 * The request's model on the transparent path, where the body is never decoded: SDKs and agents
 * write `model` first, so only the first KiB is looked at (a miss prices at the dialect default).
 */
export function headModel(raw: Buffer): string | undefined {
  return MODEL_KEY.exec(raw.subarray(0, MODEL_HEAD).toString('latin1'))?.[1];
}
