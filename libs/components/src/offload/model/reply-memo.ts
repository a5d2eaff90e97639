// A short-lived memo of compaction-model replies, scoped to one tenant and session. The gateway may
// run a pipeline twice for one request (a prefetch miss re-runs it on the completed snapshot) and
// clients retry; neither may pay for the same model call twice. In-flight calls are shared too.
// Failures are not kept: the next run may try again.
import type { Ctx } from '../../component';
import type { ModelClient, ModelReply, ModelRequest } from '../../ports/model.port';
import { sha256Hex } from '../../shared/hash';

const TTL_MS = 120_000;
const MAX_ENTRIES = 256;

interface Entry {
  at: number;
  reply: Promise<ModelReply>;
}

const memo = new Map<string, Entry>();

function sweep(now: number): void {
  for (const [k, e] of memo) {
    if (now - e.at <= TTL_MS && memo.size <= MAX_ENTRIES) break;
    memo.delete(k);
  }
}

/** client.complete(req), answered from the memo when this session asked the same thing recently. */
export function completeOnce(client: ModelClient, req: ModelRequest, ctx: Pick<Ctx, 'tenant' | 'session'>): Promise<ModelReply> {
  const now = Date.now();
  sweep(now);
  const key = sha256Hex(JSON.stringify([ctx.tenant, ctx.session, client.id, req]));
  const hit = memo.get(key);
  if (hit && now - hit.at <= TTL_MS) return hit.reply;
  const reply = client.complete(req);
  memo.set(key, { at: now, reply });
  reply.catch(() => {
    if (memo.get(key)?.reply === reply) memo.delete(key);
  });
  return reply;
}

/** Test hook: forget everything. */
export function clearReplyMemo(): void {
  memo.clear();
}
