// Tracing is off unless an OTLP endpoint is set, and the standard switches turn it off again.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { startTracing, tracingEnabled } from '../../../apps/gateway/src/observability/tracing';

const ROOT = join(__dirname, '..', '..', '..');

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

describe('tracing off loads no SDK', () => {
  // A process of its own: jest's module registry is not node's, and the point is node's.
  const probe = (env: string) =>
    JSON.parse(
      execFileSync(
        process.execPath,
        [
          '-r',
          join(ROOT, 'scripts', 'register-ts.cjs'),
          '-e',
          `const { startTracing } = require(${JSON.stringify(join(ROOT, 'apps/gateway/src/observability/tracing.ts'))});
           const t = startTracing('test', ${env});
           const sdk = Object.keys(require.cache).some((k) => k.includes('@opentelemetry/sdk-node'));
           process.stdout.write(JSON.stringify({ started: t !== null, sdk }));
           if (t) t.shutdown().catch(() => undefined).finally(() => process.exit(0));`,
        ],
        { cwd: ROOT, encoding: 'utf8' },
      ),
    ) as { started: boolean; sdk: boolean };

  it('requires @opentelemetry/sdk-node only when tracing is on', () => {
    expect(probe('{}')).toEqual({ started: false, sdk: false });
    expect(probe(`{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }`)).toEqual({ started: true, sdk: true });
  });
});
