// Streamed expand on the replay trajectories, through the real gateway (in process, memory store)
// against a fake provider that behaves like real models: when the newest turn carries a marker it
// has not expanded yet, it writes a sentence (after a thinking block, on Anthropic) and then calls
// context_guru_expand with it, streaming. Counts what the client received: expand calls that
// reached it (must be 0), the gateway's sse_expand_after_stream, and the expand rounds it ran.
import { startFakeUpstream, type RecordedRequest, type ScriptedReply } from '../test/support/fake-upstream';
import { anthropicSse, anthropicTextSse, openAiSse, openAiTextSse, SIGNATURE } from '../test/support/fake-upstream-sse';
import { startGateway } from '../test/support/gateway-harness';
import { readTurn } from '../test/support/scripted-model';
import { table } from './bench-util';
import { anthropicTrajectoryBody, openaiTrajectoryBody, trajectories } from './trajectories';

const MARKER = /<<cg:([A-Za-z0-9_-]{16})>>/g;

/** Markers in the last message (the newest tool results) the model has not asked for yet. */
function newMarker(req: RecordedRequest, asked: Set<string>): string | undefined {
  const messages = (req.body.messages ?? []) as unknown[];
  const last = JSON.stringify(messages[messages.length - 1] ?? '');
  for (const m of last.matchAll(MARKER)) if (!asked.has(m[1]!)) return m[1]!;
  return undefined;
}

function script(asked: Set<string>) {
  return (req: RecordedRequest): ScriptedReply => {
    const turn = readTurn(req);
    const id = turn.advertised && turn.expandResults.length === 0 ? newMarker(req, asked) : undefined;
    if (id) asked.add(id);
    if (req.dialect === 'anthropic') {
      if (!id) return { kind: 'sse', chunkSize: 512, events: [anthropicTextSse('Done with this step.')] };
      return {
        kind: 'sse',
        chunkSize: 512,
        events: [
          anthropicSse([
            { type: 'thinking', thinking: 'The output was shortened; I need all of it.', signature: SIGNATURE },
            { type: 'text', text: 'Let me look at the full output.' },
            { type: 'tool_use', id: `toolu_x${id}`, name: 'context_guru_expand', input: { id } },
          ]),
        ],
      };
    }
    if (!id) return { kind: 'sse', chunkSize: 512, events: [openAiTextSse('Done with this step.')] };
    return {
      kind: 'sse',
      chunkSize: 512,
      events: [openAiSse('Let me look at the full output.', [{ id: `call_x${id}`, name: 'context_guru_expand', args: { id } }])],
    };
  };
}

export async function runExpandStream(): Promise<string> {
  const rows: string[][] = [];
  for (const preset of ['balanced', 'agent']) {
    const asked = new Set<string>();
    const upstream = await startFakeUpstream(script(asked));
    const gw = await startGateway(upstream.url, { PRESET: preset });
    try {
      let clientCalls = 0;
      let requests = 0;
      for (const dialect of ['anthropic', 'openai'] as const) {
        for (const tr of trajectories()) {
          for (let t = 1; t <= tr.rounds.length; t++) {
            const body = { ...(dialect === 'anthropic' ? anthropicTrajectoryBody(tr, t) : openaiTrajectoryBody(tr, t)), stream: true };
            const path = dialect === 'anthropic' ? '/anthropic/v1/messages' : '/openai/v1/chat/completions';
            const res = await fetch(`${gw.url}${path}`, {
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                'x-api-key': 'k',
                authorization: 'Bearer k',
                'x-context-guru-session': `${preset}-${dialect}-${tr.name}`,
              },
              body: JSON.stringify(body),
            });
            const text = await res.text();
            requests++;
            if (text.includes('"name":"context_guru_expand"')) clientCalls++;
          }
        }
      }
      const stats = (await (await fetch(`${gw.url}/stats`)).json()) as Record<string, number>;
      rows.push([
        preset,
        String(requests),
        String(asked.size),
        String(stats.expand_rounds),
        String(clientCalls),
        String(stats.sse_expand_after_stream),
      ]);
    } finally {
      await gw.close();
      await upstream.close();
    }
  }
  return table(
    [
      'preset',
      'streamed requests',
      'expand calls the model made',
      'expand rounds run',
      'expand calls the client received',
      'sse_expand_after_stream',
    ],
    rows,
  );
}
