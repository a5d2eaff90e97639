// Every seed preset serves both chat routes and /compact: the answer is relayed unchanged, and
// every body the gateway forwards passes the provider shape validator.
import { PRESET_NAMES } from '@context-guru/components';
import { validateProviderShape } from '../../libs/engine/src/wire/shape-validator';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { startGateway } from '../support/gateway-harness';
import { jsonScript } from '../support/scripted-model';
import { agentSteps, anthropicTurn, openaiTurn } from '../support/transcripts';

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
});
afterAll(async () => upstream.close());

const steps = agentSteps(24, 5);

describe.each(PRESET_NAMES)('preset %s', (preset) => {
  it('serves both dialects and /compact with provider-valid bodies', async () => {
    const gw = await startGateway(upstream.url, { PRESET: preset });
    try {
      upstream.requests.length = 0;
      for (const [dialect, path, body] of [
        ['openai', '/openai/v1/chat/completions', openaiTurn(steps, 24)],
        ['anthropic', '/anthropic/v1/messages', anthropicTurn(steps, 24)],
      ] as const) {
        const res = await fetch(`${gw.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-context-guru-session': `p-${preset}` },
          body: JSON.stringify(body),
        });
        expect(res.status).toBe(200);
        expect(await res.text()).toContain('answer to ');
        const compact = await fetch(`${gw.url}/compact?provider=${dialect}&cache=off`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        expect(compact.status).toBe(200);
        expect(validateProviderShape(dialect, await compact.json())).toEqual([]);
      }
      // summarize also spends on the caller's own model (model.source incoming) through the same upstream.
      expect(upstream.requests.length).toBeGreaterThanOrEqual(2);
      for (const r of upstream.requests) expect(validateProviderShape(r.dialect, r.body)).toEqual([]);
      const stats = (await (await fetch(`${gw.url}/stats`)).json()) as { requests: number; fail_open: number };
      expect(stats.fail_open).toBe(0);
    } finally {
      await gw.close();
    }
  });
});
