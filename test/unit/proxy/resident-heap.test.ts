// What a gateway process holds in its heap before any request needs it: the o200k table is loaded
// on the first token count, so a gateway that never counts tokens (preset off) does not carry it,
// and its full garbage collections do not mark it (issue 14). The OpenTelemetry SDK's lazy load is
// tracing.test.ts's.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');

/** Runs `body` (it may await) in a fresh node process with the sources loadable; answers its `out` as JSON. */
function inFreshProcess(body: string): Record<string, unknown> {
  const script = `
    const loaded = (part) => Object.keys(require.cache).some((k) => k.includes(part));
    (async () => {
      const out = {};
      ${body}
      process.stdout.write(JSON.stringify(out));
      process.exit(0);
    })();`;
  const stdout = execFileSync(process.execPath, ['-r', join(ROOT, 'scripts', 'register-ts.cjs'), '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe('resident heap of a gateway process', () => {
  it('loads the o200k table on the first token count, and counts exactly then', () => {
    const out = inFreshProcess(`
      require('./apps/gateway/src/gateway-context.ts');
      const { countTokens } = require('./libs/components/src/index.ts');
      out.atImport = loaded('gpt-tokenizer');
      out.count = countTokens('The parser tests pass now.');
      out.afterCount = loaded('gpt-tokenizer');
      out.exact = require('gpt-tokenizer/encoding/o200k_base').countTokens('The parser tests pass now.');`);
    expect(out.atImport).toBe(false);
    expect(out.afterCount).toBe(true);
    expect(out.count).toBe(out.exact);
  });

  it.each([
    ['off', false],
    ['agent', true],
  ])('a gateway booted on preset %s has the table loaded before it serves: %s', (preset, expected) => {
    const out = inFreshProcess(`
      const { parseEnv } = require('./apps/gateway/src/env.ts');
      const { createGatewayContext } = require('./apps/gateway/src/gateway-context.ts');
      const { createLogger } = require('./libs/engine/src/logger.ts');
      const { MemoryHotStore } = require('./libs/storage/src/index.ts');
      const env = parseEnv({ PRESET: '${preset}', DURABLE_STORE: 'none', LOG_LEVEL: 'error' });
      const store = new MemoryHotStore({ ttlSeconds: 60, maxEntries: 10 });
      const gw = await createGatewayContext(env, { store, tracing: null, log: createLogger('error', () => undefined) });
      out.loaded = loaded('gpt-tokenizer');
      await gw.close();`);
    expect(out).toEqual({ loaded: expected });
  });
});
