// extract's code strategy: a model writes a filter program for one tool output, the program runs
// in the QuickJS sandbox, and its result is accepted only if it passes the deletion-only proof
// (or, with rewrite, the sanity checks). Every refusal names a gate and the caller falls back to
// the deterministic projection, so a model failure never costs more than the model call.
import type { Ctx, Message } from '../../component';
import { pickModel, type ModelClient, type SandboxRunner } from '../../ports/model.port';
import { contentKey, hasPlaceholder } from '../../shared/marker';
import type { Gates } from '../../shared/offload';
import { countTokens } from '../../shared/tokens';
import { queryContext } from '../../shared/line-projection';
import { completeOnce } from '../model/reply-memo';
import { buildCodeRequest, codeFromReply } from './code-prompt';
import { sharedSandbox } from './sandbox/sandbox-pool';
import { isDeletionOnly } from './subsequence';

/** Largest tool output handed to the sandbox as INPUT. */
const MAX_CODE_INPUT_CHARS = 1024 * 1024;

export const CODE_GATES = [
  'model_source_fell_back_to_config',
  'code_input_too_large',
  'model_call_failed',
  'reply_without_code',
  'sandbox_rejected_program',
  'code_result_empty',
  'not_deletion_only',
  'rewrite_failed_sanity',
  'code_result_not_smaller',
] as const;
type CodeGate = (typeof CODE_GATES)[number];

export type CodeOutcome = { ok: true; text: string } | { ok: false; gate: CodeGate; detail: string };

export interface CodeOptions {
  rewrite: boolean;
  /** `model.model`: another model id on the chosen client's endpoint. */
  model?: string;
}

/** Whose call this is: a re-run of the same request, or a retry, reuses the reply. */
export type CallScope = Pick<Ctx, 'tenant' | 'session' | 'models'>;

/** One output through model → sandbox → acceptance. Never throws. */
async function reduceWithCode(
  client: ModelClient,
  output: string,
  context: string,
  o: CodeOptions,
  scope: CallScope,
  sandbox: SandboxRunner = sharedSandbox(),
): Promise<CodeOutcome> {
  if (output.length > MAX_CODE_INPUT_CHARS) return { ok: false, gate: 'code_input_too_large', detail: `${output.length} chars` };
  let reply;
  try {
    reply = await completeOnce(client, buildCodeRequest(output, context, o.rewrite, o.model), scope);
  } catch (err) {
    return { ok: false, gate: 'model_call_failed', detail: err instanceof Error ? err.message : String(err) };
  }
  // A reply cut by max_tokens may still hold a closed fence around half a program: refuse it.
  const code = reply.truncated ? null : codeFromReply(reply.text);
  if (code === null) return { ok: false, gate: 'reply_without_code', detail: reply.truncated ? 'truncated reply' : 'no fenced code block' };
  const run = await sandbox.run(code, output);
  if (!run.ok) return { ok: false, gate: 'sandbox_rejected_program', detail: `${run.failure}: ${run.detail}` };
  return accept(run.output, output, o.rewrite);
}

/** The acceptance checks, in the order that names the most useful reason. */
function accept(result: string, input: string, rewrite: boolean): CodeOutcome {
  const text = result.replace(/\s+$/, '');
  if (!text.trim()) return { ok: false, gate: 'code_result_empty', detail: 'the program produced an empty result' };
  if (rewrite) {
    // Unverified by design; still no fake markers and nothing that merely echoes the input.
    if (hasPlaceholder(text)) return { ok: false, gate: 'rewrite_failed_sanity', detail: 'result carries a marker' };
  } else if (!isDeletionOnly(text, input)) {
    return { ok: false, gate: 'not_deletion_only', detail: 'result is not an in-order subsequence of the input' };
  }
  if (countTokens(text) >= countTokens(input.replace(/\s+$/, '')))
    return { ok: false, gate: 'code_result_not_smaller', detail: 'result not smaller' };
  return { ok: true, text };
}

interface Job {
  i: number;
  m: Message;
  text: string;
}

export interface SettledJob extends Job {
  outcome: CodeOutcome;
}

/**
 * The model calls of one request, started as candidates are found and awaited together. Identical
 * outputs within the request share one call.
 */
export class CodeBatch {
  private readonly jobs: Array<Job & { pending: Promise<CodeOutcome> }> = [];
  private readonly byContent = new Map<string, Promise<CodeOutcome>>();
  private context?: string;

  constructor(
    private readonly client: ModelClient,
    private readonly messages: readonly Message[],
    private readonly o: CodeOptions,
    private readonly scope: CallScope,
    /** Called once, when the first output is handed to the model. */
    private readonly onFirstCall: () => void = () => undefined,
    private readonly sandbox?: SandboxRunner,
  ) {}

  add(i: number, m: Message, text: string): void {
    if (this.jobs.length === 0) this.onFirstCall();
    const key = contentKey(text);
    let pending = this.byContent.get(key);
    if (!pending) {
      this.context ??= queryContext(this.messages);
      pending = reduceWithCode(this.client, text, this.context, this.o, this.scope, this.sandbox);
      this.byContent.set(key, pending);
    }
    this.jobs.push({ i, m, text, pending });
  }

  async settle(): Promise<SettledJob[]> {
    return Promise.all(this.jobs.map(async ({ i, m, text, pending }) => ({ i, m, text, outcome: await pending })));
  }
}

/** The batch for this request, or undefined when no model is available (the caller records the gate). */
export function codeBatchFor(
  messages: readonly Message[],
  ctx: Ctx,
  source: 'incoming' | 'config',
  o: CodeOptions,
  gates: Gates,
  sandbox?: SandboxRunner,
): CodeBatch | undefined {
  const { client, fellBack } = pickModel(ctx.models, source);
  if (!client) return undefined;
  const note = () => (fellBack ? gates.add('model_source_fell_back_to_config') : undefined);
  return new CodeBatch(client, messages, o, ctx, note, sandbox ?? ctx.models?.sandbox);
}
