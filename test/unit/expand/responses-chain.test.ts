// The stored-response id map of an answer stitched from expand rounds (responses-chain.ts): every
// earlier round's id is recorded as continued by the last round's, frozen with the session beside
// the trails, and a later request naming one in previous_response_id is forwarded with that one
// value rewritten to the last round's id — every other byte as the client sent it.
import { emptySnapshot, frozenSlot, type SessionSnapshot } from '@context-guru/components';
import { buildResponsesChains } from '../../../libs/engine/src/expand/responses-chain';
import { TRAIL_COMPONENT } from '../../../libs/engine/src/expand/trail';
import { trailEdits, trailKeys } from '../../../libs/engine/src/expand/trail-edits';
import type { AnswerRound, ResponsesChain } from '../../../libs/engine/src/expand/expand.types';
import { decodeRequest, encodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';

const round = (id: unknown): AnswerRound => ({ turn: { json: { id, object: 'response', output: [] } }, results: [] });
const last = (id: unknown) => ({ json: { id, object: 'response', output: [] } });

function snapshotOf(chains: readonly ResponsesChain[]): SessionSnapshot {
  const s = emptySnapshot();
  for (const c of chains) s.frozen.set(frozenSlot(TRAIL_COMPONENT, c.anchor), JSON.stringify(c));
  return s;
}

/** A Codex-like continuation, pretty-printed so any re-serialisation would show; `prev` spliced in raw. */
function body(prev: string): string {
  return [
    '{',
    '  "model": "gpt-5-codex",',
    '  "store": true,',
    `  "previous_response_id" :  ${prev} ,`,
    '  "input": [ {"type": "function_call_output", "call_id": "call_1", "output": "ok"} ],',
    '  "tools": [ {"type": "function", "name": "read_file", "parameters": {"type": "object"}} ],',
    '  "x_unknown": {"kept": [1, 2.50, "é"]}',
    '}',
  ].join('\n');
}

function forwarded(raw: string, chains: readonly ResponsesChain[]): string {
  const view = decodeRequest('responses', raw);
  return encodeRequest(view, view.messages, { injectExpand: false, trails: trailEdits(view, snapshotOf(chains)) }).raw;
}

describe('the Responses id map', () => {
  const chains = buildResponsesChains([round('resp_1'), round('resp_2')], last('resp_3'));

  it('records every earlier round as continued by the last one', () => {
    expect(chains.map((c) => c.final)).toEqual(['resp_3', 'resp_3']);
    expect(new Set(chains.map((c) => c.anchor)).size).toBe(2);
    // Loaded with the session exactly when a request names that id.
    const keysOf = (raw: string) => trailKeys(decodeRequest('responses', raw));
    expect(keysOf(body('"resp_1"'))).toContain(chains[0]?.anchor);
    expect(keysOf(body('"resp_2"'))).toContain(chains[1]?.anchor);
    expect(keysOf(body('"resp_3"'))).not.toContain(chains[0]?.anchor);
  });

  it('records nothing without rounds, without a last id, or for a round that kept the same id', () => {
    expect(buildResponsesChains([], last('resp_3'))).toEqual([]);
    expect(buildResponsesChains([round('resp_1')], last(undefined))).toEqual([]);
    expect(buildResponsesChains([round('resp_3'), round(7)], last('resp_3'))).toEqual([]);
  });

  it.each(['"resp_1"', '"resp_2"', '"resp_\\u0031"'])('forwards %s as the last round id, one value changed', (prev) => {
    const raw = body(prev);
    const out = forwarded(raw, chains);
    expect(out).toBe(raw.replace(prev, '"resp_3"'));
    expect(validateProviderShape('responses', JSON.parse(out) as Record<string, unknown>)).toEqual([]);
  });

  it('leaves an id it does not know, the last id itself and a body without one as received', () => {
    for (const raw of [body('"resp_9"'), body('"resp_3"'), body('null')]) expect(forwarded(raw, chains)).toBe(raw);
    expect(forwarded(body('"resp_1"'), [])).toBe(body('"resp_1"'));
  });

  it('ignores a frozen record that is not a chain of this version', () => {
    const [first] = chains;
    if (!first) throw new Error('no chain');
    expect(forwarded(body('"resp_1"'), [{ ...first, v: 2 }])).toBe(body('"resp_1"'));
  });
});
