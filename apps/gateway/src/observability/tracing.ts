// OpenTelemetry traces, configured only by the standard OTEL_* variables and off unless an OTLP
// endpoint is set. Off means off: startTracing answers null, the proxy holds no trace object and
// every hook is a skipped optional call. On, the SDK (NodeSDK, batch export) is traces-only —
// metrics stay on /metrics — and no span attribute ever carries message content.
import type { RequestTrace, TraceHeaders } from './request-trace';

export type Source = Record<string, string | undefined>;

export interface Tracing {
  /** A trace for one client request, child of its incoming `traceparent` when it has one. */
  begin(headers: TraceHeaders, dialect: string, route: string): RequestTrace;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

/**
 * On only with an OTLP endpoint, and not disabled by OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none.
 * @internal exported for tests
 */
export function tracingEnabled(src: Source = process.env): boolean {
  if ((src.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  if (
    (src.OTEL_TRACES_EXPORTER ?? '')
      .split(',')
      .map((s) => s.trim())
      .includes('none')
  )
    return false;
  return Boolean(src.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || src.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/**
 * Starts the SDK when tracing is enabled. The exporter is OTLP over HTTP with JSON bodies unless
 * OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL or OTEL_TRACES_EXPORTER asks for another one, which the SDK
 * then builds itself. One traced gateway per process: the SDK registers the global API.
 */
export function startTracing(version: string, src: Source = process.env): Tracing | null {
  if (!tracingEnabled(src)) return null;
  // The SDK and its exporters are loaded only here: loaded, they hold about 19 MB of the process's
  // resident memory (6 MB of live heap, the rest code and boot garbage) that tracing off never uses.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startSdk } = require('./tracing-sdk') as typeof import('./tracing-sdk');
  return startSdk(version, src);
}
