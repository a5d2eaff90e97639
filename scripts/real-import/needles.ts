// Needles: facts of a real session that a later turn relies on. A needle is a line of an early tool
// output holding an identifier that the model uses again, in a tool call's arguments, at least
// three tool outputs later — when the output is no longer among the newest three, where age-based
// offloading acts — and that nothing in between (no tool output, no earlier text of the task or the
// model) repeats. The line itself occurs in no later output, so only that early output holds it:
// the gateway must keep it visible or one expand away.
import type { RealNeedle as Needle } from '../../bench/real-corpus';
import type { Conversation } from './conversation';

const IDENTIFIER = /\b[A-Za-z_][A-Za-z0-9_]*(?:_[A-Za-z0-9]|[a-z][A-Z]|[A-Z]{2}[a-z0-9_])[A-Za-z0-9_]*\b/g;
const MAX_NEEDLES = 2;
const MIN_GAP = 3;

interface Output {
  n: number;
  callId: string;
  label: string;
  text: string;
  /** Index in conv.turns. */
  at: number;
}

function outputsOf(conv: Conversation): Output[] {
  const calls = new Map<string, string>();
  const out: Output[] = [];
  conv.turns.forEach((t, at) => {
    if (t.kind === 'assistant') for (const c of t.calls) calls.set(c.id, `${c.name} ${JSON.stringify(c.input).slice(0, 80)}`);
    if (t.kind === 'tool') out.push({ n: out.length + 1, callId: t.callId, label: calls.get(t.callId) ?? '?', text: t.text, at });
  });
  return out;
}

/** Up to two needles, from the earliest outputs that hold one. */
export function findNeedles(conv: Conversation): Needle[] {
  const outputs = outputsOf(conv);
  const needles: Needle[] = [];
  const used = new Set<string>();
  for (const o of outputs) {
    if (needles.length >= MAX_NEEDLES) break;
    const before = [
      conv.system,
      ...conv.turns.slice(0, o.at).map((t) => (t.kind === 'assistant' ? t.text + JSON.stringify(t.calls) : t.text)),
    ].join('\n');
    const later = outputs.filter((x) => x.n > o.n);
    for (const raw of o.text.split('\n')) {
      const line = raw.trim();
      if (line.length < 16 || line.length > 160 || later.some((x) => x.text.includes(line))) continue;
      const found = [...line.matchAll(IDENTIFIER)]
        .map(([id]) => id)
        .find((id) => !used.has(id) && !before.includes(id) && useOf(conv, outputs, o, id));
      if (!found) continue;
      const use = useOf(conv, outputs, o, found);
      if (!use) continue;
      used.add(found);
      const lineNo = o.text.split('\n').indexOf(raw) + 1;
      needles.push({
        id: `n${needles.length + 1}-out${o.n}`,
        text: line,
        description: `line ${lineNo} of tool output #${o.n} (${o.label}); its identifier \`${found}\` is used again in the ${use.tool} arguments of assistant turn ${use.turn}, ${use.gap} tool outputs later; nothing in between repeats it and the line occurs in no later tool output`,
        firstToolOutput: o.n,
        toolCallId: o.callId,
        inNewest3: false,
      });
      break;
    }
  }
  return needles;
}

/** The first later tool call that uses `id`, when it comes at least MIN_GAP outputs later and nothing in between mentions it. */
function useOf(conv: Conversation, outputs: Output[], o: Output, id: string): { turn: number; tool: string; gap: number } | undefined {
  let assistantTurn = conv.turns.slice(0, o.at).filter((t) => t.kind === 'assistant').length;
  for (let at = o.at + 1; at < conv.turns.length; at++) {
    const t = conv.turns[at];
    if (!t) break;
    if (t.kind === 'tool' || t.kind === 'user') {
      if (t.text.includes(id)) return undefined;
      continue;
    }
    assistantTurn++;
    const call = t.calls.find((c) => JSON.stringify(c.input).includes(id));
    if (call) {
      const gap = outputs.filter((x) => x.at > o.at && x.at < at).length;
      return gap >= MIN_GAP ? { turn: assistantTurn, tool: call.name, gap } : undefined;
    }
    if (t.text.includes(id)) return undefined;
  }
  return undefined;
}
