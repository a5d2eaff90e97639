// Every second each replica records what it serves in gateway_replicas (GET /v1/replicas): its
// id, start time, applied generation, per-tenant config versions and last propagation time. The
// tenant map is written only when it changed since the last beat that landed; the other beats
// touch the time and generation alone. A failed heartbeat is only logged: the replica keeps
// serving, and the row ages out of the list.
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
  /** The tenant map the row holds (as last written), undefined until a full beat landed. */
  private written: string | undefined;

  constructor(
    readonly id: string,
    private readonly o: {
      sql: SqlClient;
      sync: Pick<ControlSync, 'status'>;
      directory: Pick<TenantDirectory, 'versions'>;
      log: Logger;
      everyMs?: number;
    },
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
    const tenantVersions = this.o.directory.versions();
    const map = JSON.stringify(tenantVersions);
    const beat = {
      id: this.id,
      generation: s.generation,
      lastPropagationMs: s.lastPropagationMs === undefined ? null : Math.round(s.lastPropagationMs),
    };
    const full = async () => {
      await replicasRepository.heartbeat(this.o.sql, { ...beat, startedAt: this.startedAt, tenantVersions });
      this.written = map;
    };
    const write = async () => {
      if (this.written !== map || !(await replicasRepository.touch(this.o.sql, beat))) await full();
    };
    this.inFlight = write()
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
