// /compact stores originals without any provider call, so it is rate-limited per tenant
// (COMPACT_PER_MINUTE); and its `?preset=` would let any client run another pipeline than the
// operator's, so it is refused unless COMPACT_PRESET_OVERRIDE=true. Before, 30 × 1 MB /compact
// calls ran back to back and every `?preset=` was honoured.
import { RateLimit } from '../../libs/engine/src/shared/rate-limit';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { openAiCompletion } from '../support/fake-upstream-json';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { agentSteps, openaiTurn } from '../support/transcripts';

let upstream: FakeUpstream;
let strict: GatewayHarness;
let open: GatewayHarness;
const raw = JSON.stringify(openaiTurn(agentSteps(10, 6), 10));

beforeAll(async () => {
  upstream = await startFakeUpstream(() => ({ kind: 'json', body: openAiCompletion('ok') }));
  strict = await startGateway(upstream.url, { PRESET: 'off', COMPACT_PER_MINUTE: '3' });
  open = await startGateway(upstream.url, { PRESET: 'off', COMPACT_PRESET_OVERRIDE: 'true' });
});
afterAll(async () => {
  await strict.close();
  await open.close();
  await upstream.close();
});

let n = 0;
const compact = (gw: GatewayHarness, query = '') =>
  fetch(`${gw.url}/compact?provider=openai&cache=off${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-context-guru-session': `c${++n}` },
    body: raw,
  });

it('answers 429 with Retry-After past COMPACT_PER_MINUTE for the tenant', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) statuses.push((await compact(strict)).status);
  const refused = await compact(strict);
  expect(statuses).toEqual([200, 200, 200]);
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(await refused.json()).toMatchObject({ error: { code: 'compact_rate_limited' } });
});

it('refuses ?preset= unless COMPACT_PRESET_OVERRIDE allows it', async () => {
  const refused = await compact(strict, '&preset=agent');
  expect(refused.status).toBe(403);
  expect(await refused.json()).toMatchObject({ error: { code: 'compact_preset_forbidden' } });
  const allowed = await compact(open, '&preset=agent');
  expect(allowed.status).toBe(200);
  expect(await allowed.text()).toMatch(/<<cg:[0-9a-f]{16}>>/);
});

it('keeps one bucket per key, refilled over time', () => {
  let t = 0;
  const limit = new RateLimit(2, () => t);
  expect([limit.take('a'), limit.take('a')]).toEqual([0, 0]);
  expect(limit.take('a')).toBe(30);
  expect(limit.take('b')).toBe(0);
  t += 30_000;
  expect(limit.take('a')).toBe(0);
  expect(limit.retryAfter('a')).toBe(30);
});
