// One client's session turns through a gateway replica, and what the store tests assert of them:
// the provider's cached prefix is never busted (every message already sent is re-sent byte for
// byte, bar a planned rewrite the response announced) and every marker forwarded resolves.
import { REWRITE_HEADER } from '../../apps/gateway/src/proxy/chat/respond.step';
import type { FakeUpstream, RecordedRequest } from './fake-upstream';
import type { MarkerIdSource } from '@context-guru/components';
import { head, markerIds, markerIdOf, rawMessages, withoutBreakpoints } from './forwarded-bytes';
import { agentSteps, anthropicTurn } from './transcripts';

export interface Sent {
  turn: number;
  forwarded: RecordedRequest;
  ms: number;
  /** The response's x-context-guru-rewrite header: a planned (priced) rewrite it announced. */
  rewrite: string | null;
}

export type Steps = ReturnType<typeof agentSteps>;

/** One client turn of `session` through `gateway`: the body the provider got and how long the client waited. */
export async function sendTurn(gateway: string, upstream: FakeUpstream, session: string, steps: Steps, t: number): Promise<Sent> {
  const before = upstream.requests.length;
  const started = performance.now();
  const res = await fetch(`${gateway}/anthropic/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'x-context-guru-session': session },
    body: JSON.stringify(anthropicTurn(steps, t)),
  });
  expect(res.status).toBe(200);
  await res.text();
  const ms = performance.now() - started;
  expect(upstream.requests.length).toBe(before + 1);
  const forwarded = upstream.requests[before];
  if (!forwarded) throw new Error('the provider saw no request');
  return { turn: t, forwarded, ms, rewrite: res.headers.get(REWRITE_HEADER) };
}

/**
 * No cache bust: the head never changes and every message already sent is re-sent byte for byte,
 * except from the message a turn's planned (priced) rewrite names in its response header.
 */
export function expectNoBust(sent: readonly Sent[]): void {
  const busts: string[] = [];
  const first = sent[0];
  for (let i = 1; first && i < sent.length; i++) {
    const [before, now] = [sent[i - 1], sent[i]];
    if (!before || !now) continue;
    const prev = rawMessages(before.forwarded.raw).map(withoutBreakpoints);
    const next = rawMessages(now.forwarded.raw).map(withoutBreakpoints);
    if (head(now.forwarded.raw) !== head(first.forwarded.raw)) busts.push(`turn ${now.turn}: head`);
    const at = prev.findIndex((m, k) => next[k] !== m);
    if (at >= 0 && now.rewrite !== `planned; from=${at}`) busts.push(`turn ${now.turn}: message ${at}`);
  }
  expect(busts).toEqual([]);
}

/** Every marker in `raw` expands through the gateway to its original, for `session`. */
export async function expectResolvable(gateway: string, keys: MarkerIdSource, session: string, raw: string): Promise<void> {
  const ids = [...markerIds(raw)];
  expect(ids.length).toBeGreaterThan(0);
  for (const id of ids) {
    const res = await fetch(`${gateway}/expand?id=${id}`, { headers: { 'x-context-guru-session': session } });
    expect([id, res.status]).toEqual([id, 200]);
    expect(await markerIdOf(keys, await res.text())).toBe(id);
  }
}

/** The gateway's fail-open count so far (/stats). */
export async function failOpen(gateway: string): Promise<number> {
  return ((await (await fetch(`${gateway}/stats`)).json()) as { fail_open: number }).fail_open;
}

/** What /readyz says of the hot store. */
export async function storeStatus(gateway: string): Promise<string> {
  return ((await (await fetch(`${gateway}/readyz`)).json()) as { store: { status: string } }).store.status;
}

/** Polls every 100 ms until `what` holds (20 s at most; no assertion on how long it took). */
export async function until(what: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await what()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('condition never met');
}
