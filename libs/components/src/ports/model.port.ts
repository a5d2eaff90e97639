// The model a model-backed component may call. `incoming` reuses the proxied request's own model,
// endpoint and credential; `config` is the operator's dedicated cheap model. Either may be absent:
// components then degrade (extract → deterministic, summarize → no-op) and say so in a gate.
export type ModelPurpose = 'extract' | 'summarize';

export interface ModelRequest {
  system: string;
  prompt: string;
  maxTokens: number;
  /** Who is spending: picks the per-call timeout and labels the spend record. */
  purpose: ModelPurpose;
  /** `model.model`: another model id on the same endpoint and credential. */
  model?: string;
}

export interface ModelReply {
  text: string;
  inputTokens: number;
  outputTokens: number;
  /** The reply was cut by max_tokens. */
  truncated: boolean;
}

export interface ModelClient {
  /** `provider:model`, for stats and cache keys. */
  readonly id: string;
  complete(req: ModelRequest): Promise<ModelReply>;
}

export interface ModelSources {
  incoming?: ModelClient;
  config?: ModelClient;
}

export type ModelSource = 'incoming' | 'config';

/** The client for a component's `model.source`; `incoming` falls back to `config` when absent. */
export function pickModel(models: ModelSources | undefined, source: ModelSource): { client?: ModelClient; fellBack: boolean } {
  if (!models) return { fellBack: false };
  if (source === 'config') return { client: models.config, fellBack: false };
  if (models.incoming) return { client: models.incoming, fellBack: false };
  return { client: models.config, fellBack: models.config !== undefined };
}
