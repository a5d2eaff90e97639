// Priced rewrites on the Bedrock route price with the model the path names: the body carries no
// `model`, so a plan priced from the body would use the default family's rates. A real agent
// session (bench/corpus-real) is replayed over /bedrock/model/{id}/invoke with preset auto against
// a fake Bedrock that verifies the gateway's SigV4 and bills like a prompt cache; the price table
// gives that model id distinctive rates, and the planned rewrites' cost in /stats is at them.
import { realCorpus, realRequest, type RealSession } from '../../bench/real-corpus';
import { cloudScript, TEST_KEY, TEST_REGION, type CloudWatch } from '../support/fake-cloud';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { PromptCacheSim, cachingScript } from '../support/prompt-cache';
import { jsonScript } from '../support/scripted-model';

jest.setTimeout(120_000);

const SESSION: RealSession = realCorpus().find((s) => s.id === 'real-openhands-llama4-ponyc-4595') ?? realCorpus()[0]!;
const MODEL = 'us.anthropic.claude-priced-test-v1:0';
// Input $7 / MTok: no built-in family has it, so a cost at that rate came from this entry.
const INPUT_USD = 7;
const PRICE_TABLE = JSON.stringify({
  families: [{ family: 'bedrock-priced-test', match: [MODEL], input: INPUT_USD, output: 35, cache_write: 8.75, cache_read: 0.7 }],
});

type Planned = `planned_rewrite${'s' | '_cost_tokens' | '_cost_usd' | '_saving_per_turn_tokens' | '_saving_per_turn_usd'}`;

let upstream: FakeUpstream;
let gateway: GatewayHarness;
let now = 1_700_000_000_000;
const watch: CloudWatch = { problems: [], sent: [], vertexToken: () => undefined };

beforeAll(async () => {
  upstream = await startFakeUpstream(
    cloudScript(cachingScript(new PromptCacheSim({ now: () => now }), jsonScript({ expand: false })), watch),
  );
  gateway = await startGateway(
    upstream.url,
    {
      PRESET: 'auto',
      PRICE_TABLE,
      BEDROCK_UPSTREAM: upstream.url,
      AWS_REGION: TEST_REGION,
      AWS_ACCESS_KEY_ID: TEST_KEY.id,
      AWS_SECRET_ACCESS_KEY: TEST_KEY.secret,
      AWS_SESSION_TOKEN: TEST_KEY.token,
    },
    { clock: { now: () => now } },
  );
  for (let t = 1; t <= SESSION.stats.requests; t++) {
    now += 30_000;
    const { model: _model, stream: _stream, ...rest } = realRequest(SESSION, 'anthropic', t);
    const res = await fetch(`${gateway.url}/bedrock/model/${encodeURIComponent(MODEL)}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-context-guru-session': 'bedrock-priced' },
      body: JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', ...rest }),
    });
    expect(res.status).toBe(200);
    await res.json();
  }
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

describe('priced rewrites on the Bedrock route, preset auto', () => {
  it('every call was signed with the gateway key', () => {
    expect(upstream.requests.length).toBeGreaterThan(0);
    expect(watch.problems).toEqual([]);
  });

  it("plans rewrites and prices them at the path model's entry of the price table", async () => {
    const stats = (await (await fetch(`${gateway.url}/stats`)).json()) as Record<Planned, number>;
    expect(stats.planned_rewrites).toBeGreaterThan(0);
    // Tokens are priced at the family's input rate (a cost may be net negative: a cut that also removes).
    expect(stats.planned_rewrite_saving_per_turn_tokens).toBeGreaterThan(0);
    expect(stats.planned_rewrite_cost_tokens).not.toBe(0);
    const perMTok = (usd: number, tokens: number) => (usd * 1e6) / tokens;
    // /stats rounds dollars to 6 places; the default Anthropic family would give $3.
    expect(perMTok(stats.planned_rewrite_saving_per_turn_usd, stats.planned_rewrite_saving_per_turn_tokens)).toBeCloseTo(INPUT_USD, 1);
    expect(perMTok(stats.planned_rewrite_cost_usd, stats.planned_rewrite_cost_tokens)).toBeCloseTo(INPUT_USD, 1);
  });
});
