// Every second each replica upserts what it serves into gateway_replicas (GET /v1/replicas): its
// id, start time, applied generation, per-tenant config versions and last propagation time. A
// failed heartbeat is only logged: the replica keeps serving, and the row ages out of the list.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { replicasRepository, type SqlClient } from '@context-guru/storage';
import { errorText, type Logger } from '@context-guru/engine';
import type { ControlSync } from './control-sync';
import type { TenantDirectory } from './tenant-directory';

export function replicaId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

export class ReplicaHeartbeat {
  readonly startedAt = new Date();
  private timer: NodeJS.Timeout | undefined;
  private failing = false;
  private inFlight: Promise<void> | undefined;

  constructor(
    readonly id: string,
    private readonly o: { sql: SqlClient; sync: ControlSync; directory: TenantDirectory; log: Logger; everyMs?: number },
  ) {}

  start(): void {
    void this.beat();
    this.timer = setInterval(() => void this.beat(), this.o.everyMs ?? 1000);
    this.timer.unref();
  }

  beat(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    const s = this.o.sync.status();
    if (!s.loaded) return Promise.resolve();
    this.inFlight = replicasRepository
      .heartbeat(this.o.sql, {
        id: this.id,
        startedAt: this.startedAt,
        generation: s.generation,
        tenantVersions: this.o.directory.versions(),
        lastPropagationMs: s.lastPropagationMs === undefined ? null : Math.round(s.lastPropagationMs),
      })
      .then(() => {
        this.failing = false;
      })
      .catch((err: unknown) => {
        if (!this.failing) this.o.log.warn('replica heartbeat failed', { error: errorText(err) });
        this.failing = true;
      })
      .finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  /** Stops beating and removes the row, so a stopped replica leaves the list at once. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.inFlight;
    await replicasRepository.remove(this.o.sql, this.id).catch(() => undefined);
  }
}
