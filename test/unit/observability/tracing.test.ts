// Tracing is off unless an OTLP endpoint is set, and the standard switches turn it off again.
import { startTracing, tracingEnabled } from '../../../apps/gateway/src/observability/tracing';

describe('tracing switch', () => {
  it('is off without an OTLP endpoint, so nothing is started', () => {
    expect(tracingEnabled({})).toBe(false);
    expect(startTracing('test', {})).toBeNull();
  });

  it('is on with either endpoint variable', () => {
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
  });

  it('OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none win over an endpoint', () => {
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_SDK_DISABLED: 'TRUE' })).toBe(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
  });
});
