// Helpers for tests and benches that run gateway replicas against a control plane: wait until a
// replica has applied a generation, and post a turn with a tenant key.
import type { Dialect } from '@context-guru/components';
import type { Replica } from './replicas';

export interface ReadyBody {
  ready: boolean;
  control?: { loaded: boolean; generation: number; latest: number; stale: boolean; error?: string; replica?: string };
  config: Array<{ tenant: string; version: number; pipeline: string[] }>;
}

export async function readyz(r: Replica): Promise<{ status: number; body: ReadyBody }> {
  const res = await fetch(`${r.url}/readyz`);
  return { status: res.status, body: (await res.json()) as ReadyBody };
}

/** Polls /readyz until the replica reports `generation` applied; returns when it saw it (ms epoch). */
export async function waitGeneration(r: Replica, generation: number, timeoutMs = 15_000, everyMs = 5): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await readyz(r).catch(() => ({ body: undefined as ReadyBody | undefined }));
    if ((body?.control?.generation ?? -1) >= generation) return Date.now();
    if (Date.now() > deadline) throw new Error(`replica ${r.url} did not apply generation ${generation} (at ${body?.control?.generation})`);
    await new Promise((res) => setTimeout(res, everyMs));
  }
}

export function postTurn(
  r: Replica,
  dialect: Dialect,
  body: unknown,
  headers: Record<string, string> = {},
  prefix = '',
): Promise<Response> {
  const path = dialect === 'openai' ? '/openai/v1/chat/completions' : '/anthropic/v1/messages';
  const cred: Record<string, string> = dialect === 'openai' ? { authorization: 'Bearer sk-test' } : { 'x-api-key': 'sk-ant-test' };
  return fetch(`${r.url}${prefix}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...cred, ...headers },
    body: JSON.stringify(body),
  });
}
