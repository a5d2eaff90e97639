// A holdout session is forwarded byte-identically to a bypassed one for its whole life — with a
// pipeline that rewrites a treated session beside it, INJECT_EXPAND=always and cacheinject in the
// pipeline — and is still counted: /stats marks its requests as holdout, the metrics by arm.
import { armPoint } from '../../libs/engine/src/session/arm';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver';
import { validateProviderShape } from '../../libs/engine/src/wire/shape-validator';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { jsonScript } from '../support/scripted-model';
import { responsesTurn } from '../support/responses-fixtures';
import { agentSteps, anthropicTurn, openaiTurn } from '../support/transcripts';

jest.setTimeout(120_000);

const CONFIG =
  'pipeline: [cacheinject, format, dedup, collapse, mask]\ncomponents:\n  mask: { keep_recent: 2 }\nholdout: { fraction: 0.5 }\n';
const ENV = { CONFIG, INJECT_EXPAND: 'always' };
const TURNS = [3, 5, 7, 9, 11];
const DIALECTS = ['anthropic', 'openai', 'responses'] as const;
type RouteDialect = (typeof DIALECTS)[number];
const PATHS: Record<RouteDialect, string> = {
  anthropic: '/anthropic/v1/messages',
  openai: '/openai/v1/chat/completions',
  responses: '/openai/v1/responses',
};
const TURN_BODY = { anthropic: anthropicTurn, openai: openaiTurn, responses: responsesTurn };

/** The first session ids (as the tenant `default` keys them) that fall in each arm at fraction 0.5. */
function sessionIn(arm: 'holdout' | 'treated', dialect: string): string {
  for (let i = 0; ; i++) {
    const id = `${dialect}-${arm}-${i}`;
    if (armPoint('default', `default:${id}`) < 0.5 === (arm === 'holdout')) return id;
  }
}

let upstream: FakeUpstream;
let measured: GatewayHarness;
let bypassing: GatewayHarness;
let receiver: OtlpReceiver;

beforeAll(async () => {
  upstream = await startFakeUpstream(jsonScript({ expand: false }));
  receiver = await startOtlpReceiver();
  const saved = { ...process.env };
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '20';
  try {
    measured = await startGateway(upstream.url, ENV);
  } finally {
    process.env = saved;
  }
  bypassing = await startGateway(upstream.url, ENV, { tracing: null });
});
afterAll(async () => {
  await measured?.close();
  await bypassing?.close();
  await upstream?.close();
  await receiver?.close();
});

async function send(g: GatewayHarness, dialect: RouteDialect, raw: string, headers: Record<string, string>): Promise<string> {
  const path = PATHS[dialect];
  const before = upstream.requests.length;
  const res = await fetch(`${g.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: raw });
  expect(res.status).toBe(200);
  await res.text();
  expect(upstream.requests.length).toBe(before + 1);
  return upstream.requests[before]!.raw;
}

describe.each(DIALECTS)('%s', (dialect) => {
  const steps = agentSteps(12, { anthropic: 51, openai: 52, responses: 53 }[dialect]);
  const bodies = TURNS.map((t) => JSON.stringify(TURN_BODY[dialect](steps, t)));
  const held = sessionIn('holdout', dialect);
  const treated = sessionIn('treated', dialect);
  const forwarded = { holdout: [] as string[], bypass: [] as string[], treated: [] as string[] };

  beforeAll(async () => {
    for (const raw of bodies) {
      forwarded.holdout.push(await send(measured, dialect, raw, { 'x-context-guru-session': held }));
      forwarded.treated.push(await send(measured, dialect, raw, { 'x-context-guru-session': treated }));
      forwarded.bypass.push(await send(bypassing, dialect, raw, { 'x-context-guru-session': held, 'x-context-guru-bypass': 'true' }));
    }
  });

  it('forwards every turn of the holdout session byte-identical to bypass: the inbound bytes', () => {
    expect(forwarded.holdout).toEqual(forwarded.bypass);
    expect(forwarded.holdout).toEqual(bodies);
    for (const raw of forwarded.holdout) expect(raw).not.toMatch(/context_guru_expand|<<cg:|cache_control/);
  });

  it('while the treated session beside it is rewritten, offered the expand tool, and provider-valid', () => {
    expect(forwarded.treated.filter((raw, i) => raw !== bodies[i]).length).toBeGreaterThan(0);
    for (const raw of forwarded.treated) {
      expect(raw).toContain('context_guru_expand');
      expect(validateProviderShape(dialect, JSON.parse(raw))).toEqual([]);
    }
  });

  it("marks every request span with the session's arm", async () => {
    const keys = await measured.gw.keys!.forTenant('default');
    const spans = (id: string) =>
      receiver.spans.filter((sp) => sp.kind === 2 && sp.attributes['cg.session_hash'] === keys.name('trace', `default:${id}`));
    for (let i = 0; i < 200 && spans(held).length + spans(treated).length < 2 * TURNS.length; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(spans(held).map((sp) => sp.attributes['cg.arm'])).toEqual(TURNS.map(() => 'holdout'));
    expect(spans(treated).map((sp) => sp.attributes['cg.arm'])).toEqual(TURNS.map(() => 'treated'));
  });

  it('records each arm with the session state, and counts the holdout session in /stats and the metrics', async () => {
    const [h, t] = await Promise.all([
      measured.gw.store.loadSession('default', `default:${held}`, []),
      measured.gw.store.loadSession('default', `default:${treated}`, []),
    ]);
    expect([h.arm, t.arm]).toEqual(['holdout', 'treated']);
    const rows = await measured.gw.holdout.ledger.list('default', 1);
    // This dialect's two sessions, each billed in its own arm for every turn (the savings estimate's rows).
    // Named as traces name them: keyed with the tenant's key.
    const keys = await measured.gw.keys!.forTenant('default');
    const row = (id: string) => rows.find((r) => r.session === keys.name('trace', `default:${id}`));
    expect([row(held)?.arm, row(held)?.turns, row(treated)?.arm, row(treated)?.turns]).toEqual([
      'holdout',
      TURNS.length,
      'treated',
      TURNS.length,
    ]);
    expect(row(held)!.billedUsd).toBeGreaterThan(0);
    expect(row(treated)!.inputTokens).toBeGreaterThan(0);
  });
});

it('/stats carries the holdout block (requests by arm) and /metrics counts requests by arm', async () => {
  const stats = (await (await fetch(`${measured.url}/stats`)).json()) as { holdout: Record<string, unknown> };
  expect(stats.holdout).toMatchObject({
    fraction: 0.5,
    version: 1,
    requests: { treated: DIALECTS.length * TURNS.length, holdout: DIALECTS.length * TURNS.length },
    sessions: 2 * DIALECTS.length,
    verdict: 'insufficient_data',
  });
  expect((stats.holdout.treated as { sessions: number }).sessions).toBe(DIALECTS.length);
  expect((stats.holdout.holdout as { sessions: number }).sessions).toBe(DIALECTS.length);
  const metrics = await (await fetch(`${measured.url}/metrics`)).text();
  expect(metrics).toContain(`cg_holdout_requests_total{tenant="default",arm="holdout"} ${DIALECTS.length * TURNS.length}`);
  expect(metrics).toContain(`cg_holdout_requests_total{tenant="default",arm="treated"} ${DIALECTS.length * TURNS.length}`);
  expect(metrics).toContain(`cg_holdout_sessions{tenant="default",arm="holdout"} ${DIALECTS.length}`);
  // The bypassing gateway's bypassed turns are measured in neither arm.
  const other = (await (await fetch(`${bypassing.url}/stats`)).json()) as { holdout: Record<string, unknown> };
  expect(other.holdout).toMatchObject({ requests: { treated: 0, holdout: 0 }, sessions: 0 });
});
