// Anthropic Messages SSE as one message across expand rounds: one message_start (the first
// round's), content blocks renumbered so indices stay contiguous for the client, every
// context_guru_expand tool_use withheld, and one closing message_delta carrying the last round's
// stop reason and the usage of all rounds summed. A round with nothing withheld and no
// continuation is relayed event for event, unchanged.
import {
  type Usage,
  EXPAND_TOOL_NAME,
  field,
  isObject,
  num,
  parseJson,
  type JsonObject,
  eventJson,
  type SseEvent,
  parseUsage,
  sumUsage,
  sumUsageJson,
} from '@context-guru/engine';
import { aggregateAnthropic } from './sse-aggregate';
import type { DialectStitch } from './stitch.types';

const sse = (type: string, data: JsonObject): string => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

export class AnthropicStitch implements DialectStitch {
  withheld = 0;
  clientCalls = 0;
  errored = false;
  private round = 0;
  private events: SseEvent[] = [];
  /** Upstream block index → client index, or null for a withheld block. */
  private map = new Map<number, number | null>();
  private nextIndex = 0;
  /** No block withheld or renumbered yet in this round. */
  private identity = true;
  private roundUsage: JsonObject = {};
  private totalUsage: JsonObject = {};
  private gatewayUsage: Usage | null = null;
  private heldDelta: { json: JsonObject; raw: string } | null = null;
  private heldStop = '';

  event(ev: SseEvent, raw: string): string {
    this.events.push(ev);
    // While every block keeps its index, deltas need no parse: they are most of a stream.
    if (this.identity && (ev.event === 'content_block_delta' || ev.event === 'content_block_stop' || ev.event === 'ping')) return raw;
    const json = eventJson(ev);
    const type = field(json, 'type') ?? ev.event;
    switch (type) {
      case 'message_start':
        this.roundUsage = sumUsageJson({}, field(field(json, 'message'), 'usage'));
        // Later rounds are the same message to the client: their start only contributes usage.
        return this.round === 0 ? raw : '';
      case 'content_block_start':
        return this.blockStart(json as JsonObject, raw);
      case 'content_block_delta':
      case 'content_block_stop':
        return this.blockEvent(json as JsonObject, raw);
      case 'message_delta':
        if (isObject(json)) {
          this.heldDelta = { json, raw };
          this.roundUsage = { ...this.roundUsage, ...(isObject(json['usage']) ? json['usage'] : {}) };
        }
        return '';
      case 'message_stop':
        this.heldStop = raw;
        return '';
      case 'error':
        this.errored = true;
        return raw;
      default:
        return raw; // ping and anything newer than this code: the client's to see
    }
  }

  private blockStart(json: JsonObject, raw: string): string {
    const index = num(json['index']);
    const block = json['content_block'];
    if (field(block, 'type') === 'tool_use' && field(block, 'name') === EXPAND_TOOL_NAME) {
      this.map.set(index, null);
      this.withheld++;
      this.identity = false;
      return '';
    }
    if (field(block, 'type') === 'tool_use') this.clientCalls++;
    const to = this.nextIndex++;
    this.map.set(index, to);
    if (to !== index) this.identity = false;
    return to === index ? raw : sse('content_block_start', { ...json, index: to });
  }

  private blockEvent(json: JsonObject, raw: string): string {
    const index = num(json['index']);
    const to = this.map.get(index);
    if (to === null) return '';
    if (to === undefined || to === index) return raw;
    return sse(String(json['type']), { ...json, index: to });
  }

  turn(): JsonObject | null {
    return aggregateAnthropic(this.events);
  }

  usage(): Usage | null {
    return sumUsage(this.gatewayUsage, parseUsage('anthropic', { usage: this.roundUsage }));
  }

  nextRound(): void {
    this.endRoundUsage();
    this.round++;
    this.events = [];
    this.map.clear();
    this.identity = true;
    this.withheld = 0;
    this.clientCalls = 0;
    this.heldDelta = null;
    this.heldStop = '';
  }

  private endRoundUsage(): void {
    this.totalUsage = sumUsageJson(this.totalUsage, this.roundUsage);
    this.gatewayUsage = sumUsage(this.gatewayUsage, parseUsage('anthropic', { usage: this.roundUsage }));
    this.roundUsage = {};
  }

  close(dangling: boolean): string {
    const stop = this.heldStop || sse('message_stop', { type: 'message_stop' });
    if (this.round === 0 && this.withheld === 0) return (this.heldDelta?.raw ?? '') + this.heldStop;
    const json: JsonObject = this.heldDelta
      ? { ...this.heldDelta.json }
      : { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: {} };
    const delta: JsonObject = isObject(json['delta']) ? { ...json['delta'] } : {};
    if (dangling && this.clientCalls === 0 && delta['stop_reason'] === 'tool_use') delta['stop_reason'] = 'end_turn';
    json['delta'] = delta;
    if (this.round > 0) {
      const total = sumUsageJson(this.totalUsage, this.roundUsage);
      // Only counters: the SDKs overwrite the message's usage with what message_delta carries.
      json['usage'] = Object.fromEntries(Object.entries(total).filter(([, v]) => typeof v === 'number' || isObject(v)));
    }
    return sse('message_delta', json) + stop;
  }

  error(status: number, body: string): string {
    const parsed = field(parseJson(body), 'error');
    const error = isObject(parsed)
      ? parsed
      : { type: status === 529 ? 'overloaded_error' : 'api_error', message: `upstream answered ${status} to the expand continuation` };
    return sse('error', { type: 'error', error });
  }
}
