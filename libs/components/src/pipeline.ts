// The pipeline runs components in order and owns failure: a component that throws, grows the
// content tokens, or drops content without stashing it is reverted alone, and everything it did
// not touch survives. The guard measures with its own baseline, never a component's figures.
import { blankReport, type Component, type ComponentOutcome, type Ctx, type Message, type Report } from './component';
import { sameMessage } from './shared/message-equality';
import { itemAt } from './shared/present';
import { messageTokens } from './shared/tokens';

export interface PipelineResult {
  messages: Message[];
  tokensBefore: number;
  tokensAfter: number;
  reports: Report[];
}

export class Pipeline {
  constructor(readonly components: readonly Component[]) {}

  get names(): string[] {
    return this.components.map((c) => c.name);
  }

  async run(input: readonly Message[], ctx: Ctx): Promise<PipelineResult> {
    let snapshot = input.map(cloneMessage);
    let perMessage = snapshot.map(messageTokens);
    const tokensBefore = sum(perMessage);
    const reports: Report[] = [];
    for (const component of this.components) {
      const working = snapshot.map(cloneMessage);
      const baseline = sum(perMessage);
      const started = performance.now();
      const report = blankReport(component.name, component.kind, baseline);
      try {
        const outcome = await component.run(working, ctx);
        report.durationMs = performance.now() - started;
        fromOutcome(report, outcome);
        // Only changed messages are re-measured: a warm turn touches few of hundreds.
        const changed = changedIndices(snapshot, working);
        const after = working.length === snapshot.length ? perMessage.slice() : working.map(messageTokens);
        if (working.length === snapshot.length) for (const i of changed) after[i] = messageTokens(itemAt(working, i, 'changed message'));
        const total = sum(after);
        if (total > baseline) {
          report.reverted = true;
          report.error = `grew content tokens ${baseline} → ${total}`;
        } else if (
          component.kind === 'offload' &&
          total < baseline &&
          report.keys.length === 0 &&
          !report.skipped &&
          !report.irreversible
        ) {
          report.reverted = true;
          report.error = 'dropped content without stashing it';
        } else {
          report.tokensAfter = total;
          report.changed = changed;
          snapshot = working;
          perMessage = after;
        }
      } catch (err) {
        report.durationMs = performance.now() - started;
        report.reverted = true;
        report.error = err instanceof Error ? err.message : String(err);
      }
      reports.push(report);
    }
    return { messages: snapshot, tokensBefore, tokensAfter: sum(perMessage), reports };
  }
}

/** What a run said of itself (its wire hints, readOnceNext and anchor, count only if it is kept: encode.step). */
function fromOutcome(report: Report, outcome: ComponentOutcome): void {
  report.gates = outcome.gates ?? {};
  report.keys = outcome.keys ?? [];
  report.skipped = outcome.skipped ?? false;
  report.irreversible = outcome.irreversible ?? false;
  if (outcome.ledger?.length) report.ledger = outcome.ledger;
  if (outcome.readOnceNext) report.readOnceNext = outcome.readOnceNext;
  if (outcome.anchor !== undefined) report.anchor = outcome.anchor;
}

function sum(xs: readonly number[]): number {
  let n = 0;
  for (const x of xs) n += x;
  return n;
}

/**
 * A copy a component may change in place: the message and its content blocks. Its `tool_calls`
 * array is the original's, shared: a component that changes a call replaces the whole array
 * (see Component.run). Copying every call made each unchanged assistant message compare its calls
 * member by member after every component and again in the encoder's prefix check; shared, they
 * compare as one reference.
 */
export function cloneMessage(m: Message): Message {
  const copy: Message = { ...m };
  if (Array.isArray(m.content)) copy.content = m.content.map((b) => ({ ...b }));
  return copy;
}

function changedIndices(before: readonly Message[], after: readonly Message[]): number[] {
  const out: number[] = [];
  const n = Math.max(before.length, after.length);
  for (let i = 0; i < n; i++) {
    if (!sameMessage(before[i], after[i])) out.push(i);
  }
  return out;
}
