// Step 4: the pipeline's messages spliced back into the inbound bytes, the expand tool appended
// when this session offers it, and the savings split into what was and was not provider-cached.
import type { Message, Report } from '@context-guru/components';
import type { InjectMode } from '../engine.types';
import type { RequestReport } from '../report/request-report';
import { splitSavings } from '../report/money';
import { rewrittenIndices } from '../session/cache-guard';
import { recordForwarded } from '../tenancy/forwarded-replay';
import { revisionOf } from '../tenancy/tenant-runtime';
import { pipelineCanEmitMarkers } from '../wire/expand-tool';
import { encodeRequest } from '../wire/request.wire';
import { trailEdits } from '../expand/trail-edits';
import { withdrawalEdits } from '../wire/withdraw-breakpoints';
import type { EncodeResult, WireView } from '../wire/wire.types';
import type { PipelineRan } from './pipeline-run.step';
import type { OpenedSession } from './session-open.step';
import type { Preparing } from './prepare.types';
import { keepsOriginals } from '../tenancy/tenant-runtime';
import type { Decoded } from './prepare.types';

export interface Encoded extends EncodeResult {
  /** This turn offers the expand tool (declared by the client or appended here). */
  offered: boolean;
  /** Normalized indices the forwarded body rewrote. */
  rewritten: number[];
}

export function encodeStep(p: Preparing, d: Decoded, s: OpenedSession, ran: PipelineRan): Encoded {
  const { deps, input, report } = p;
  const { view } = d;
  const { result, state, snapshot, models } = ran;
  const offered = expandOffered(deps.injectMode, view, {
    decided: snapshot.offloaded === true,
    firstTurn: s.prev === null,
    canEmit: pipelineCanEmitMarkers(
      input.pipeline,
      keepsOriginals(input.tenant, deps.store),
      input.tenant.document.components,
      models?.incoming !== undefined || models?.config !== undefined,
    ),
  });
  const inject = offered && !view.expandToolDeclared;
  // What the provider was shown of earlier answers and the client never saw goes back in place.
  // The newest turn's client breakpoints, when all they would cache is offloaded next turn.
  const withdraw = readOnceAfterAnchor(result.reports, result.messages);
  const withdrawn = withdraw === undefined ? [] : [withdrawalEdits(view, withdraw)].filter((g) => g.length > 0);
  const opts = { injectExpand: inject, trails: [...trailEdits(view, snapshot), ...withdrawn] };
  const encoded = deps.turns
    ? deps.turns.encode(d.turn, result.messages, opts, input.tenant.id)
    : encodeRequest(view, result.messages, opts);
  // Charged afresh: a turn run again (its guarded write found a decision) is encoded again.
  report.discarded.clear();
  chargeDiscards(report, [...encoded.discarded, ...ran.guarded, ...ran.declined]);
  const rewritten = rewrittenIndices(view.messages, result.messages, encoded.discarded);
  recordForwarded(view.messages, result.messages, rewritten, state, revisionOf(d.running));
  report.saved = splitSavings(view.messages, result.messages, rewritten, ran.cachedIdx);
  return { ...encoded, offered, rewritten };
}

/**
 * Whether this turn offers the expand tool. The tool list opens the prompt in both providers'
 * caching order, so the answer is decided once per session — on its first turn, when the pipeline
 * can emit markers — and then replayed from the session state (every replica reads it) on every
 * later turn; a session that started without it never gets it mid-way. Requests without tools of
 * their own (title and summary side requests) are left alone unless INJECT_EXPAND=always.
 */
function expandOffered(mode: InjectMode, view: WireView, s: { decided: boolean; firstTurn: boolean; canEmit: boolean }): boolean {
  if (mode === 'never' || !view.toolChoiceAllowsInjection) return false;
  if (mode === 'always') return true;
  if (!view.toolsDeclared) return false;
  return s.decided || (s.firstTurn && s.canEmit);
}

/**
 * cacheinject's anchor when every tool output after it is one mask offloads once read (and there
 * is one): the newest turn's breakpoints would only cache what the next turn replaces.
 */
function readOnceAfterAnchor(reports: readonly Report[], messages: readonly Message[]): number | undefined {
  const kept = reports.filter((r) => !r.reverted);
  const anchor = kept.find((r) => r.anchor !== undefined)?.anchor;
  const next = new Set(kept.flatMap((r) => r.readOnceNext ?? []));
  if (anchor === undefined || next.size === 0) return undefined;
  for (let i = anchor + 1; i < messages.length; i++) if (messages[i]?.role === 'tool' && !next.has(i)) return undefined;
  return anchor;
}

/** Each discarded message is charged to the last component that changed it. */
function chargeDiscards(report: RequestReport, discarded: readonly number[]): void {
  for (const idx of discarded) {
    const last = [...report.reports].reverse().find((r) => !r.reverted && r.changed.includes(idx));
    if (last) report.discarded.set(last.component, (report.discarded.get(last.component) ?? 0) + 1);
  }
}
