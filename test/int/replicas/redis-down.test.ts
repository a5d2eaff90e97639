// With Redis gone the gateway keeps answering: it forwards the client's body untouched (no marker
// it could not resolve), /readyz stays 200 but reports the degraded store, and it recovers by itself.
import { spawn, type ChildProcess } from 'node:child_process';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../../support/gateway-harness';
import { freePort } from '../../support/replicas';
import { jsonScript } from '../../support/scripted-model';
import { agentSteps, openaiTurn } from '../../support/transcripts';

let port: number;
let redis: ChildProcess | undefined;
let upstream: FakeUpstream;
let gateway: GatewayHarness;

function startRedis(): Promise<void> {
  redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  return new Promise((r) => setTimeout(r, 400));
}
function stopRedis(): Promise<void> {
  return new Promise((resolve) => {
    if (!redis || redis.exitCode !== null) return resolve();
    redis.once('exit', () => resolve());
    redis.kill('SIGKILL');
  });
}

beforeAll(async () => {
  port = await freePort();
  await startRedis();
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  gateway = await startGateway(upstream.url, {
    PRESET: 'agent',
    REDIS_URL: `redis://127.0.0.1:${port}`,
    HOT_STORE: 'redis',
    DURABLE_STORE: 'none',
    CACHE_MODE: 'off',
  });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
  await stopRedis();
});

const body = JSON.stringify(openaiTurn(agentSteps(20, 6), 20));
const send = () =>
  fetch(`${gateway.url}/openai/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-context-guru-session': 'redis-down' },
    body,
  });

it('compresses, fails open while Redis is down, and recovers when it returns', async () => {
  upstream.requests.length = 0;
  expect((await send()).status).toBe(200);
  expect(upstream.requests[0]!.raw).toMatch(/<<cg:/);

  await stopRedis();
  const down = await send();
  expect(down.status).toBe(200);
  expect(upstream.requests[1]!.raw).toBe(body);
  // Still ready (it serves, fail-open) but degraded: every replica sees the same outage.
  const ready = await fetch(`${gateway.url}/readyz`);
  expect(ready.status).toBe(200);
  expect((await ready.json()) as { degraded?: boolean; store: { status: string } }).toMatchObject({
    degraded: true,
    store: { status: 'unavailable' },
  });
  const stats = (await (await fetch(`${gateway.url}/stats`)).json()) as { fail_open: number };
  expect(stats.fail_open).toBeGreaterThanOrEqual(1);

  await startRedis();
  let recovered = false;
  for (let i = 0; i < 40 && !recovered; i++) {
    await new Promise((r) => setTimeout(r, 250));
    recovered = ((await (await fetch(`${gateway.url}/readyz`)).json()) as { store: { status: string } }).store.status === 'ok';
  }
  expect(recovered).toBe(true);
  upstream.requests.length = 0;
  expect((await send()).status).toBe(200);
  expect(upstream.requests[0]!.raw).toMatch(/<<cg:/);
});
