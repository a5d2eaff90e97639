// Dry-run: a sample request through a candidate document, a stored version or the active one,
// prepared exactly as the gateway prepares it (its prepareRequest, the tenant's filter sets
// composed in) detached from everything shared (prepareDetached: a store that keeps nothing), so
// nothing is stashed and no session state is touched — the same path shadow evaluation runs.
import { Injectable } from '@nestjs/common';
import { buildPipeline, type Dialect, type PipelineDocument } from '@context-guru/components';
import { createTenantRuntime, prepareDetached, type DetachedRun } from '@context-guru/engine';
import { composeTenantDocument, configsRepository, filtersRepository } from '@context-guru/storage';
import { AdminError, notFound } from '../common/admin-errors';
import { ControlWriter } from '../common/control-writer';
import { checkDocument } from '../configs/document-check';
import { requireTenant } from '../tenants/tenants.service';

export interface DryRunInput {
  provider: Dialect;
  body: unknown;
  document?: unknown;
  version?: number;
}

const MARKER_RE = /<<cg:([0-9a-f]{16})>>/g;

function markersIn(text: string): Set<string> {
  return new Set([...text.matchAll(MARKER_RE)].flatMap(([, id]) => (id === undefined ? [] : [id])));
}

@Injectable()
export class DryRunService {
  constructor(private readonly writer: ControlWriter) {}

  private async document(
    tenant: string,
    input: DryRunInput,
  ): Promise<{ document: PipelineDocument; version: number | null; source: string }> {
    if (input.document !== undefined) return { document: checkDocument(input.document).document, version: null, source: 'candidate' };
    const stored =
      input.version !== undefined
        ? await configsRepository.get(this.writer.sql, tenant, input.version)
        : await configsRepository.active(this.writer.sql, tenant);
    if (!stored)
      throw notFound(
        input.version !== undefined
          ? `config version ${input.version} of tenant "${tenant}"`
          : `an active config of tenant "${tenant}" (pass document or version)`,
      );
    return { document: stored.document, version: stored.version, source: input.version !== undefined ? 'version' : 'active' };
  }

  async run(tenant: string, input: DryRunInput) {
    await requireTenant(this.writer.sql, tenant);
    const picked = await this.document(tenant, input);
    const filters = await filtersRepository.activeSets(this.writer.sql, tenant);
    const document = composeTenantDocument(picked.document, filters);
    try {
      buildPipeline(document, 'document');
    } catch (err) {
      throw new AdminError('invalid_document', err instanceof Error ? err.message : String(err));
    }
    const raw = typeof input.body === 'string' ? input.body : JSON.stringify(input.body);
    const runtime = createTenantRuntime(tenant, document, picked.version ?? 0);
    let run: DetachedRun;
    try {
      run = await prepareDetached(runtime, input.provider, raw);
    } catch (err) {
      throw new AdminError(
        'invalid_request',
        `body: not a valid ${input.provider} request: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    const { prepared, store } = run;
    const r = prepared.report;
    const before = markersIn(raw);
    const markers = [...markersIn(prepared.outgoing)].filter((id) => !before.has(id));
    let forwarded: unknown = prepared.outgoing;
    try {
      forwarded = JSON.parse(prepared.outgoing);
    } catch {
      // not JSON: answered as the text it is
    }
    return {
      tenant,
      config: {
        source: picked.source,
        version: picked.version,
        pipeline: runtime.built.names,
        filter_sets: filters.map((f) => `${f.name}@${f.version}`),
      },
      forwarded,
      tokens: { before: r.tokensBefore, after: r.tokensAfter },
      components: r.reports.map((c) => ({
        component: c.component,
        kind: c.kind,
        tokens_before: c.tokensBefore,
        tokens_after: c.tokensAfter,
        skipped: c.skipped,
        reverted: c.reverted,
        ...(c.error ? { error: c.error } : {}),
        changed: c.changed,
        gates: c.gates,
      })),
      markers: markers.map((id) => ({ id, marker: `<<cg:${id}>>`, original_chars: store.stashed.get(id)?.length ?? null })),
      expand_tool: prepared.advertised,
      fail_open: r.failOpen ?? null,
      // What a real request would have written, kept in the dry-run's own object and dropped.
      would_write: { stashes: store.stashed.size, frozen_decisions: store.frozen },
    };
  }
}
