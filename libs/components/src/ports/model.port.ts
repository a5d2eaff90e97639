// The model a model-backed component may call. `incoming` reuses the proxied request's own model,
// endpoint and credential; `config` is the operator's dedicated cheap model. Either may be absent:
// components then degrade (extract → deterministic, summarize → no-op) and say so in a gate.
import type { SandboxLimits, SandboxResult } from '../offload/extract/sandbox/sandbox.types';

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

/** Recent replies, so a re-run or a retry of the same session never pays for the same call twice. */
export interface ReplyCache {
  complete(client: ModelClient, req: ModelRequest, scope: { tenant: string; session: string }): Promise<ModelReply>;
}

/** Runs a model-written program over a tool output, isolated and bounded (extract's code strategy). */
export interface SandboxRunner {
  run(code: string, input: string, limits?: SandboxLimits): Promise<SandboxResult>;
}

export interface ModelSources {
  incoming?: ModelClient;
  config?: ModelClient;
  /** The memo of whoever hands out these sources (absent: every call goes out). */
  replies?: ReplyCache;
  /** Where model-written programs run: the owner's pool (absent: the library's own shared pool). */
  sandbox?: SandboxRunner;
}

export type ModelSource = 'incoming' | 'config';

/** The client for a component's `model.source`; `incoming` falls back to `config` when absent. */
export function pickModel(models: ModelSources | undefined, source: ModelSource): { client?: ModelClient; fellBack: boolean } {
  if (!models) return { fellBack: false };
  if (source === 'config') return { client: models.config, fellBack: false };
  if (models.incoming) return { client: models.incoming, fellBack: false };
  return { client: models.config, fellBack: models.config !== undefined };
}
