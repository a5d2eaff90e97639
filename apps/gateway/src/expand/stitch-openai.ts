// OpenAI Chat Completions SSE as one completion across expand rounds: one role delta and one id
// (the first round's), tool calls renumbered so the client's indices stay contiguous, every
// context_guru_expand call withheld, and one closing finish chunk (the last round's reason) plus
// one usage chunk summing every round. A round with nothing withheld and no continuation is
// relayed chunk for chunk, unchanged. Several choices (n > 1) cannot be one conversation: such a
// stream is relayed as it is.
import {
  type Usage,
  EXPAND_TOOL_NAME,
  field,
  isObject,
  num,
  parseJson,
  str,
  type JsonObject,
  eventJson,
  type SseEvent,
  parseUsage,
  sumUsage,
  sumUsageJson,
} from '@context-guru/engine';
import { aggregateOpenAi } from './sse-aggregate';
import type { DialectStitch } from './stitch.types';

const data = (json: unknown): string => `data: ${JSON.stringify(json)}\n\n`;
const DONE = 'data: [DONE]\n\n';

function emptyDelta(delta: JsonObject): boolean {
  return Object.values(delta).every((v) => v === null || v === undefined || v === '');
}

export class OpenAiStitch implements DialectStitch {
  withheld = 0;
  clientCalls = 0;
  errored = false;
  private round = 0;
  private several = false;
  private events: SseEvent[] = [];
  private head: { id: unknown; created: unknown } | null = null;
  /** Upstream tool-call index → client index, or null for a withheld call. */
  private map = new Map<number, number | null>();
  private nextIndex = 0;
  private roundUsage: unknown = null;
  private totalUsage: JsonObject | null = null;
  private gatewayUsage: Usage | null = null;
  private held: { finish: { json: JsonObject; raw: string | null } | null; usage: { json: JsonObject; raw: string } | null; done: string } =
    { finish: null, usage: null, done: '' };

  event(ev: SseEvent, raw: string): string {
    if (ev.data.trim() === '[DONE]') {
      if (this.several) return raw;
      this.held.done = raw;
      return '';
    }
    const json = eventJson(ev);
    if (!isObject(json) || this.several) return raw;
    this.events.push(ev);
    if (json['error'] !== undefined) {
      this.errored = true;
      return raw;
    }
    const head = (this.head ??= { id: json['id'], created: json['created'] });
    if (isObject(json['usage'])) this.roundUsage = json['usage'];
    const choices = json['choices'];
    if (!Array.isArray(choices) || choices.length === 0) {
      if (isObject(json['usage'])) {
        this.held.usage = { json, raw };
        return '';
      }
      return raw;
    }
    if (choices.length > 1 || num(field(choices[0], 'index')) !== 0) return this.giveUp(raw);
    return this.choiceChunk(json, choices[0], raw, head);
  }

  /** n > 1: everything held so far goes out as it came, and the rest streams through. */
  private giveUp(raw: string): string {
    this.several = true;
    const held = (this.held.finish?.raw ?? '') + (this.held.usage?.raw ?? '');
    this.held = { finish: null, usage: null, done: '' };
    return held + raw;
  }

  private choiceChunk(json: JsonObject, choice: unknown, raw: string, head: { id: unknown; created: unknown }): string {
    let changed = false;
    const c: JsonObject = isObject(choice) ? { ...choice } : {};
    const delta: JsonObject = isObject(c['delta']) ? { ...c['delta'] } : {};
    const calls = delta['tool_calls'];
    if (Array.isArray(calls)) {
      const renumbered = this.renumberCalls(calls);
      changed = renumbered.changed;
      if (renumbered.kept.length) delta['tool_calls'] = renumbered.kept;
      else delete delta['tool_calls'];
    }
    if (this.round > 0) {
      // The client already has this completion's role and id: a continuation is more of it.
      if ('role' in delta) delete delta['role'];
      changed = true;
    }
    const out: JsonObject = changed ? { ...json, id: head.id, created: head.created, choices: [{ ...c, delta }] } : json;
    const finish = c['finish_reason'];
    if (finish !== null && finish !== undefined) {
      this.held.finish = { json: out, raw: changed ? null : raw };
      return '';
    }
    if (!changed) return raw;
    if (emptyDelta(delta) && !isObject(json['usage'])) return '';
    return data(out);
  }

  /** The client's view of a chunk's tool calls: expand calls withheld, the rest renumbered contiguously. */
  private renumberCalls(calls: unknown[]): { kept: unknown[]; changed: boolean } {
    let changed = false;
    const kept: unknown[] = [];
    for (const call of calls) {
      const index = num(field(call, 'index'));
      let to = this.map.get(index);
      if (to === undefined) {
        to = str(field(field(call, 'function'), 'name')) === EXPAND_TOOL_NAME ? null : this.nextIndex++;
        if (to === null) this.withheld++;
        else this.clientCalls++;
        this.map.set(index, to);
      }
      if (to !== index) changed = true;
      if (to !== null) kept.push(to === index ? call : { ...(call as JsonObject), index: to });
    }
    return { kept, changed };
  }

  turn(): JsonObject | null {
    return aggregateOpenAi(this.events);
  }

  usage(): Usage | null {
    return sumUsage(this.gatewayUsage, parseUsage('openai', { usage: this.roundUsage }));
  }

  nextRound(): void {
    if (isObject(this.roundUsage)) this.totalUsage = sumUsageJson(this.totalUsage, this.roundUsage);
    this.gatewayUsage = sumUsage(this.gatewayUsage, parseUsage('openai', { usage: this.roundUsage }));
    this.roundUsage = null;
    this.round++;
    this.events = [];
    this.map.clear();
    this.withheld = 0;
    this.clientCalls = 0;
    this.held = { finish: null, usage: null, done: '' };
  }

  close(dangling: boolean): string {
    if (this.several) return this.held.done;
    const { finish, usage, done } = this.held;
    if (this.round === 0 && this.withheld === 0) return (finish ? (finish.raw ?? data(finish.json)) : '') + (usage?.raw ?? '') + done;
    const base = { id: this.head?.id, object: 'chat.completion.chunk', created: this.head?.created };
    let out = this.finishChunk(finish?.json ?? null, base, dangling);
    const total = isObject(this.roundUsage) ? sumUsageJson(this.totalUsage, this.roundUsage) : this.totalUsage;
    if (total) out += data({ ...(usage?.json ?? base), id: this.head?.id, created: this.head?.created, choices: [], usage: total });
    return out + (done || DONE);
  }

  /**
   * The one closing finish chunk: the last round's, or a plain stop. A stream whose only tool calls
   * were withheld expand calls (a dangling loop) does not tell the client to run tools.
   */
  private finishChunk(finish: JsonObject | null, base: JsonObject, dangling: boolean): string {
    if (!finish) return data({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    const first = Array.isArray(finish['choices']) ? (finish['choices'] as unknown[])[0] : undefined;
    const choice: JsonObject = isObject(first) ? { ...first } : {};
    if (dangling && this.clientCalls === 0 && choice['finish_reason'] === 'tool_calls') choice['finish_reason'] = 'stop';
    return data({ ...finish, choices: [choice] });
  }

  error(status: number, body: string): string {
    const parsed = field(parseJson(body), 'error');
    const error = isObject(parsed)
      ? parsed
      : { message: `upstream answered ${status} to the expand continuation`, type: 'api_error', code: null };
    return data({ error });
  }
}
