// A short-lived memo of compaction-model replies, scoped to one tenant and session. The gateway may
// run a pipeline twice for one request (a prefetch miss re-runs it on the completed snapshot) and
// clients retry; neither may pay for the same model call twice. In-flight calls are shared too.
// Failures are not kept: the next run may try again. The memo belongs to whoever hands out the
// model sources (the gateway context), never to the process: two gateways never share replies.
import type { Ctx } from '../../component';
import type { ModelClient, ModelReply, ModelRequest, ReplyCache } from '../../ports/model.port';
import { sha256Hex } from '../../shared/hash';

const TTL_MS = 120_000;
const MAX_ENTRIES = 256;

interface Entry {
  at: number;
  reply: Promise<ModelReply>;
}

export class ReplyMemo implements ReplyCache {
  private readonly entries = new Map<string, Entry>();

  complete(client: ModelClient, req: ModelRequest, scope: Pick<Ctx, 'tenant' | 'session'>): Promise<ModelReply> {
    const now = Date.now();
    this.sweep(now);
    const key = sha256Hex(JSON.stringify([scope.tenant, scope.session, client.id, req]));
    const hit = this.entries.get(key);
    if (hit && now - hit.at <= TTL_MS) return hit.reply;
    const reply = client.complete(req);
    this.entries.set(key, { at: now, reply });
    reply.catch(() => {
      if (this.entries.get(key)?.reply === reply) this.entries.delete(key);
    });
    return reply;
  }

  private sweep(now: number): void {
    for (const [k, e] of this.entries) {
      if (now - e.at <= TTL_MS && this.entries.size <= MAX_ENTRIES) break;
      this.entries.delete(k);
    }
  }
}

/** client.complete(req), answered from the sources' memo when this session asked the same thing recently. */
export function completeOnce(
  client: ModelClient,
  req: ModelRequest,
  scope: Pick<Ctx, 'tenant' | 'session' | 'models'>,
): Promise<ModelReply> {
  const memo = scope.models?.replies;
  return memo ? memo.complete(client, req, scope) : client.complete(req);
}
