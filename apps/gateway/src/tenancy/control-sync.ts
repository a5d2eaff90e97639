// Keeps a replica's TenantDirectory at the control plane's generation. Postgres holds the truth;
// announcements (Redis pub/sub, or the in-process bus when embedded) only wake the replica early,
// and a poll of the generation row every 500 ms covers a lost one. Only tenants stamped above
// the applied generation are re-read. A failed read changes nothing: the replica keeps serving
// what it applied last and retries on the next tick until the read succeeds.
import { composeTenantDocument, type GenerationSource, type SqlClient } from '@context-guru/storage';
import {
  errorText,
  type Logger,
  candidateRuntime,
  createTenantRuntime,
  type ShadowCandidate,
  type TenantRuntime,
} from '@context-guru/engine';
import { readControl, readGenerationRow, type GenerationRow, type TenantRead } from './control-reader';
import type { TenantDirectory, TenantEntry } from './tenant-directory';

export interface ControlStatus {
  /** The first snapshot has been applied. */
  loaded: boolean;
  /** The generation this replica serves (-1 before the first load). */
  generation: number;
  /** The newest generation this replica has heard of. */
  latest: number;
  /** Serving an older generation than announced, or the last read failed. */
  stale: boolean;
  error?: string;
  lastPropagationMs?: number;
}

export interface ControlSyncOptions {
  sql: SqlClient;
  directory: TenantDirectory;
  /** The PRESET / CONFIG runtime: what a tenant without an active config serves. */
  fallback: TenantRuntime;
  sources: readonly GenerationSource[];
  log: Logger;
  pollMs?: number;
  /** Called after each applied generation (propagationMs absent for the boot load). */
  onApplied?: (generation: number, propagationMs: number | undefined) => void;
}

interface Built {
  fingerprint: string;
  runtime: TenantRuntime;
}

export class ControlSync {
  private applied = -1;
  private latest = -1;
  private error: string | undefined;
  private lastPropagationMs: number | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly unsubscribe: Array<() => void> = [];
  /** Runtimes by tenant with what they were built from: rebuilt only when that changes. */
  private readonly built = new Map<string, Built>();
  private closed = false;
  /** The identity of the database the applied generation was read from (see GenerationRow). */
  private identity = '';

  constructor(private readonly o: ControlSyncOptions) {}

  /**
   * The generation to read changes after, given the head the poll read; null: nothing to read.
   * An announcement may already have said there is more; the head is read all the same, so a
   * restored database is seen even while changes flow.
   */
  private readSince(head: GenerationRow): number | null {
    if (this.restored(head)) {
      // A restore: generations count from the backup's again, and tenants stamped below the one
      // applied may have changed. Everything is read again and every runtime rebuilt.
      this.o.log.warn('control plane restored from a backup; reloading every tenant', {
        applied: this.applied,
        generation: head.generation,
        identityChanged: head.identity !== this.identity,
      });
      this.latest = head.generation;
      this.built.clear();
      return -1;
    }
    if (head.generation > this.latest) this.latest = head.generation;
    return head.generation <= this.applied && this.latest <= this.applied ? null : this.applied;
  }

  /** The database went back: a lower generation than the one applied, or another database altogether. */
  private restored(head: GenerationRow): boolean {
    return head.generation < this.applied || (this.identity !== '' && head.identity !== this.identity);
  }

  /** Subscribes, starts the poll and tries the first load; never throws (status says why not ready). */
  async start(): Promise<void> {
    for (const s of this.o.sources) {
      this.unsubscribe.push(
        s.subscribe((g) => {
          if (g > this.latest) this.latest = g;
          if (g > this.applied) this.kick();
        }),
      );
    }
    this.timer = setInterval(() => this.kick(), this.o.pollMs ?? 500);
    this.timer.unref();
    this.kick();
    await this.running;
  }

  status(): ControlStatus {
    const s: ControlStatus = {
      loaded: this.applied >= 0,
      generation: this.applied,
      latest: Math.max(this.latest, this.applied),
      stale: this.error !== undefined || this.latest > this.applied,
    };
    if (this.error) s.error = this.error;
    if (this.lastPropagationMs !== undefined) s.lastPropagationMs = this.lastPropagationMs;
    return s;
  }

  /** Runs one refresh now, or one more right after the one in flight. */
  kick(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => (this.running = undefined));
  }

  /** Resolves when the refresh in flight (if any) is done. */
  async settle(): Promise<void> {
    while (this.running) await this.running;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    for (const u of this.unsubscribe.splice(0)) u();
    await this.settle();
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      await this.refresh();
    } while (this.again && !this.closed);
  }

  private async refresh(): Promise<void> {
    try {
      const head = this.applied >= 0 ? await readGenerationRow(this.o.sql) : undefined;
      const since = head ? this.readSince(head) : -1;
      if (since === null) {
        this.error = undefined;
        return;
      }
      const read = await readControl(this.o.sql, since);
      const changed = new Map<string, TenantEntry>();
      for (const t of read.changed) changed.set(t.state.tenant.id, this.entryFor(t));
      for (const id of [...this.built.keys()]) if (!read.ids.has(id)) this.built.delete(id);
      const boot = this.applied < 0;
      this.o.directory.apply(changed, read.ids);
      this.applied = read.generation;
      this.identity = head?.identity ?? (await readGenerationRow(this.o.sql)).identity;
      if (read.generation > this.latest) this.latest = read.generation;
      this.error = undefined;
      const propagationMs = boot || read.changedAt <= 0 ? undefined : Math.max(0, Date.now() - read.changedAt);
      if (propagationMs !== undefined) this.lastPropagationMs = propagationMs;
      this.o.onApplied?.(read.generation, propagationMs);
      if (changed.size) this.o.log.info('control generation applied', { generation: read.generation, tenants: [...changed.keys()] });
    } catch (err) {
      if (this.error === undefined)
        this.o.log.warn('control plane read failed; serving the last applied config', { error: errorText(err), generation: this.applied });
      this.error = errorText(err);
    }
  }

  /** The tenant's entry; its runtime is rebuilt only when its config version or filter sets changed. */
  private entryFor(t: TenantRead): TenantEntry {
    const { tenant, config, filters } = t.state;
    const fingerprint = JSON.stringify([config?.version ?? 0, t.rewrote, filters.map((f) => [f.name, f.version])]);
    let built = this.built.get(tenant.id);
    if (built?.fingerprint !== fingerprint) {
      try {
        const document = composeTenantDocument(config?.document ?? this.o.fallback.document, filters);
        const shadow = this.candidateFor(t);
        built = { fingerprint, runtime: createTenantRuntime(tenant.id, document, config?.version ?? 0, t.rewrote, shadow) };
        this.built.set(tenant.id, built);
      } catch (err) {
        // The admin validated the document by building it; a build that fails here (e.g. an older
        // gateway) keeps the tenant's previous pipeline, while its keys and state still apply.
        this.o.log.error('tenant config failed to build; keeping its previous pipeline', {
          tenant: tenant.id,
          version: config?.version,
          error: errorText(err),
        });
        built ??= { fingerprint: '', runtime: createTenantRuntime(tenant.id, this.o.fallback.document, 0, t.rewrote) };
      }
    }
    return { runtime: built.runtime, disabled: tenant.disabledAt !== null, keyHashes: t.keyHashes, generation: tenant.generation };
  }

  /**
   * The shadow candidate the active document names, built once with it (the fingerprint covers it:
   * versions are immutable and the active version decides which candidate). One that does not
   * build here is logged and left out; the active pipeline serves regardless.
   */
  private candidateFor(t: TenantRead): ShadowCandidate | undefined {
    const wanted = t.state.config?.document.shadow;
    if (!wanted || !t.shadow) return undefined;
    try {
      const document = composeTenantDocument(t.shadow.document, t.state.filters);
      return { version: t.shadow.version, sample: wanted.sample, runtime: candidateRuntime(t.state.tenant.id, document, t.shadow.version) };
    } catch (err) {
      this.o.log.error('shadow candidate failed to build; no shadow evaluation', {
        tenant: t.state.tenant.id,
        version: t.shadow.version,
        error: errorText(err),
      });
      return undefined;
    }
  }
}
