// The OpenTelemetry SDK behind startTracing (tracing.ts), in a module of its own so that a gateway
// with tracing off never loads it.
import { context, propagation, trace, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { RequestTrace } from './request-trace';
import type { Source, Tracing } from './tracing';

export function startSdk(version: string, src: Source): Tracing {
  const protocolSet = Boolean(src.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || src.OTEL_EXPORTER_OTLP_PROTOCOL || src.OTEL_TRACES_EXPORTER);
  const sdk = new NodeSDK({
    ...(protocolSet ? {} : { traceExporter: new OTLPTraceExporter() }),
    ...(src.OTEL_SERVICE_NAME ? {} : { serviceName: 'context-guru-gateway' }),
    instrumentations: [],
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  const tracer: Tracer = trace.getTracer('context-guru', version);
  return {
    begin: (headers, dialect, route) => new RequestTrace(tracer, propagation.extract(context.active(), headers), dialect, route),
    async shutdown() {
      await sdk.shutdown();
      // Lets a later gateway in the same process (tests) register its own SDK.
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
