// Random bodies × random subsets of rewritten tool outputs: the encoder's output must be exactly the
// body with those strings re-encoded — every other byte, and every untouched message, as received.
import type { Dialect } from '../../../libs/engine/src/wire/wire.types';
import { expandToolJson } from '../../../libs/engine/src/wire/expand-tool';
import { decodeRequest, encodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';
import { flatten, mulberry32, randomText, type Generated } from '../../support/random-bodies';
import { randomConversation, slotToolOutput } from '../../support/random-conversations';

const CASES = 250;

function runCase(dialect: Dialect, seed: number): void {
  const rng = mulberry32(seed);
  const gen: Generated = randomConversation(dialect, rng, slotToolOutput);
  const none = new Map<number, string>();
  const raw = flatten(gen.root, gen.slots, none);
  const view = decodeRequest(dialect, raw);
  expect(validateProviderShape(dialect, view.body)).toEqual([]);

  // decode surfaces exactly the slots, in order, as tool messages
  const toolIdx = view.messages.flatMap((m, i) => (m.role === 'tool' ? [i] : []));
  expect(toolIdx.map((i) => view.messages[i]!.content)).toEqual(gen.slots.map((s) => s.text));

  const overrides = new Map<number, string>();
  const out = view.messages.map((m) => structuredClone(m));
  toolIdx.forEach((i, slot) => {
    if (rng() < 0.4) {
      const next = randomText(rng);
      out[i]!.content = next;
      if (next !== gen.slots[slot]!.text) overrides.set(slot, next);
    }
  });
  const inject = rng() < 0.3;
  const res = encodeRequest(view, out, { injectExpand: inject });

  expect(res.discarded).toEqual([]);
  let expected = flatten(gen.root, gen.slots, overrides);
  if (res.injected) {
    // the tool is the last element of `tools`, or `tools` was created at the end of the body
    expect(res.raw.includes(expandToolJson(dialect))).toBe(true);
    expected = res.raw.replace(`,${expandToolJson(dialect)}`, '').replace(`,"tools":[${expandToolJson(dialect)}]`, '');
    expect(flatten(gen.root, gen.slots, overrides)).toBe(expected);
  } else {
    expect(res.raw).toBe(expected);
  }
  expect(res.changed).toBe(overrides.size > 0 || res.injected);

  // every untouched message keeps its raw substring; re-decoding yields exactly the new texts
  for (const m of gen.messages) {
    const before = flatten(m, gen.slots, none);
    if (flatten(m, gen.slots, overrides) === before) expect(res.raw.includes(before)).toBe(true);
  }
  const again = decodeRequest(dialect, res.raw);
  expect(toolIdx.map((i) => again.messages[i]!.content)).toEqual(out.filter((m) => m.role === 'tool').map((m) => m.content));
  expect(validateProviderShape(dialect, again.body)).toEqual([]);
  if (inject) expect(again.expandToolDeclared).toBe(res.injected);
}

describe.each<Dialect>(['openai', 'anthropic'])('randomized write-back (%s)', (dialect) => {
  it(`round-trips ${CASES} random bodies with random rewrites byte-exactly`, () => {
    for (let seed = 1; seed <= CASES; seed++) {
      try {
        runCase(dialect, seed * 7919 + (dialect === 'openai' ? 0 : 1));
      } catch (err) {
        throw new Error(`seed ${seed}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
    }
  });
});
