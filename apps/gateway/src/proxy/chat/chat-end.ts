// The end of a chat request: its trace closes and its report is recorded (stats, metrics, usage)
// exactly once, whichever step ended it; a recording fault is logged, never surfaced.
import { errorText, emptyReport, type RequestReport } from '@context-guru/engine';
import { recordRequest } from '../../observability/metrics-record';
import type { HotReply } from '../../http/hot-http';
import { sendError } from '../../http/request-errors';
import type { ChatExchange } from './chat-exchange';
import type { ChatEnd, Stop } from './chat-outcome';

export function endRequest(x: ChatExchange, report: RequestReport, end: ChatEnd): void {
  const { gw } = x;
  try {
    x.trace?.end(report, end);
    gw.stats.record(report);
    recordRequest(gw.metrics, report, end, (performance.now() - x.started) / 1000);
    gw.usage.record(report);
  } catch (err) {
    gw.log.error('stats recording failed', { error: errorText(err) });
  }
}

/** Answers a stopped request; without an exchange (no tenant yet) nothing is recorded. */
export function stopped(reply: HotReply, s: Stop, x?: ChatExchange): HotReply {
  if (s.error) sendError(reply, s.error);
  if (!x) return reply;
  if (s.report) endRequest(x, s.report, s.end);
  else x.trace?.end(emptyReport(x.route.dialect, x.tenant.id), s.end);
  return reply;
}
