// What the gateway itself spends on compaction models — "spends money to save money" is only a
// claim until the spend sits next to the savings in /stats and /metrics. Counted per purpose
// (extract, summarize) and in total; key names follow the /stats append-only contract.
import type { ModelPurpose } from '@context-guru/components';

export interface SpendTotals {
  llm_calls: number;
  llm_input_tokens: number;
  llm_output_tokens: number;
  llm_timeouts: number;
  llm_errors: number;
  llm_truncated: number;
}

export interface SpendSnapshot extends SpendTotals {
  llm_by_component: Record<ModelPurpose, SpendTotals>;
}

function zero(): SpendTotals {
  return { llm_calls: 0, llm_input_tokens: 0, llm_output_tokens: 0, llm_timeouts: 0, llm_errors: 0, llm_truncated: 0 };
}

export class SpendRecorder {
  private readonly total = zero();
  private readonly by: Record<ModelPurpose, SpendTotals> = { extract: zero(), summarize: zero() };

  private bump(purpose: ModelPurpose, key: keyof SpendTotals, n = 1): void {
    this.total[key] += n;
    this.by[purpose][key] += n;
  }

  /** A request was sent to the provider. */
  call(purpose: ModelPurpose): void {
    this.bump(purpose, 'llm_calls');
  }

  usage(purpose: ModelPurpose, input: number, output: number, truncated: boolean): void {
    this.bump(purpose, 'llm_input_tokens', input);
    this.bump(purpose, 'llm_output_tokens', output);
    if (truncated) this.bump(purpose, 'llm_truncated');
  }

  timeout(purpose: ModelPurpose): void {
    this.bump(purpose, 'llm_timeouts');
  }

  error(purpose: ModelPurpose): void {
    this.bump(purpose, 'llm_errors');
  }

  snapshot(): SpendSnapshot {
    return {
      ...this.total,
      llm_by_component: { extract: { ...this.by.extract }, summarize: { ...this.by.summarize } },
    };
  }
}
