// Traces from the real gateway to a real OTLP/HTTP receiver: the span tree of a streamed request
// that made an expand round (continuing the caller's trace, and handing each upstream call its own
// traceparent), and of a request whose component was reverted. No span carries message content.
import { Pipeline, type Component } from '@context-guru/components';
import { startGateway, type GatewayHarness } from '../support/gateway-harness';
import { childrenOf, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { MODELS, SESSION_CONFIG, startObservedUpstream, type ObservedUpstream } from '../support/observed-session';
import { agentSteps, anthropicTurn, openaiTurn } from '../support/transcripts';
import { sessionHash } from '../../libs/engine/src/session/session-point';
import { createTenantRuntime } from '../../libs/engine/src/tenancy/tenant-runtime';
import type { TenantDirectory } from '../../apps/gateway/src/tenancy/tenant-directory';

jest.setTimeout(60_000);

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const SESSION = 'trace-session-do-not-leak';
const steps = agentSteps(6, 41);

let receiver: OtlpReceiver;
let up: ObservedUpstream;
let gateway: GatewayHarness;
let upstreamSeen = 0;
/** The session hash traces carry: keyed with the tenant's key (not the SHA-256 anyone could compute). */
let tracedSession = '';

/** Grows the newest message: the pipeline must revert it alone. */
const grower: Component = {
  name: 'grower',
  kind: 'reformat',
  run(messages) {
    const last = messages[messages.length - 1]!;
    if (typeof last.content === 'string') last.content += ' and a great deal of padding that only adds tokens';
    return {};
  },
};

async function post(path: string, body: unknown, headers: Record<string, string>): Promise<void> {
  const res = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  await res.text();
}

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  up = await startObservedUpstream();
  const saved = { ...process.env };
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '20';
  try {
    gateway = await startGateway(up.upstream.url, { CONFIG: SESSION_CONFIG });
  } finally {
    process.env = saved;
  }
  expect(gateway.gw.tracing).not.toBeNull();
  tracedSession = (await gateway.gw.keys!.forTenant('default')).name('trace', `default:${SESSION}`);
  // 1. A streamed Anthropic request that opens with an expand call, inside the caller's trace.
  up.expandNext(true);
  await post('/anthropic/v1/messages', anthropicTurn(steps, 4, { model: MODELS.anthropic, stream: true }), {
    'x-api-key': 'sk-ant-trace',
    'x-context-guru-session': SESSION,
    traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
  });
  up.expandNext(false);
  upstreamSeen = up.upstream.requests.length;
  // 2. A request whose second component grows the prompt and is reverted.
  const rt = createTenantRuntime('default', { pipeline: ['format'] }, 7);
  const runtime = { ...rt, built: { ...rt.built, pipeline: new Pipeline([...rt.built.pipeline.components, grower]) } };
  (gateway.gw.tenants as TenantDirectory).apply(new Map([['default', { runtime, disabled: false, keyHashes: [], generation: 1 }]]));
  await post('/openai/v1/chat/completions', openaiTurn(steps, 2, { model: MODELS.openai }), {
    authorization: 'Bearer sk-trace',
    'x-context-guru-session': 'reverted',
  });
  // Closing flushes every buffered span to the receiver.
  await gateway.close();
});
afterAll(async () => {
  await up.close();
  await receiver.close();
});

const roots = (): ReceivedSpan[] => receiver.spans.filter((s) => s.kind === 2);
const byName = (list: ReceivedSpan[], name: string) => list.filter((s) => s.name === name);

describe('a streamed request with an expand round', () => {
  const root = () => roots().find((s) => s.traceId === TRACE_ID)!;

  it('continues the incoming trace with one server span carrying the request attributes', () => {
    const r = root();
    expect(r).toBeDefined();
    expect(r.attributes['cg.session_hash']).not.toBe(sessionHash(`default:${SESSION}`));
    expect(r.name).toBe('POST /anthropic/v1/messages');
    expect(r.parentSpanId).toBe(PARENT_ID);
    expect(r.attributes).toEqual(
      expect.objectContaining({
        'cg.tenant': 'default',
        'cg.dialect': 'anthropic',
        'cg.session_hash': tracedSession,
        'cg.config_version': 1,
        'cg.preset': 'custom',
        'cg.outcome': 'ok',
        'cg.enforced': true,
        'cg.expand_rounds': 1,
        'cg.sse': 'streamed',
      }),
    );
    expect(r.attributes['cg.tokens_after']).toBeLessThan(r.attributes['cg.tokens_before'] as number);
    expect(r.resource['service.name']).toBe('context-guru-gateway');
  });

  it('has pipeline, flush, upstream and expand-round children, the round holding its own upstream call', () => {
    const kids = childrenOf(receiver.spans, root());
    expect(kids.map((k) => k.name)).toEqual(['cg.pipeline', 'cg.store.flush', 'cg.upstream', 'cg.expand.round']);
    const components = childrenOf(receiver.spans, kids[0]!);
    expect(components.map((c) => c.name)).toEqual(['cacheinject', 'format', 'dedup', 'collapse', 'mask'].map((n) => `cg.component ${n}`));
    const mask = components[4]!;
    expect(mask.attributes).toEqual(expect.objectContaining({ 'cg.component': 'mask', 'cg.acted': true, 'cg.reverted': false }));
    expect(mask.attributes['cg.saved_tokens']).toBeGreaterThan(0);
    expect(kids[1]!.attributes['cg.stashed']).toBeGreaterThan(0);
    const round = kids[3]!;
    expect(round.attributes).toEqual(expect.objectContaining({ 'cg.round': 1, 'cg.expand.ids': 1, 'cg.expand.continued': true }));
    const inner = childrenOf(receiver.spans, round);
    expect(inner.map((s) => [s.name, s.kind, s.attributes['cg.round'], s.attributes['http.response.status_code']])).toEqual([
      ['cg.upstream', 3, 1, 200],
    ]);
    expect(kids[2]!.attributes['cg.round']).toBe(0);
  });

  it('lays every span out inside its parent, on one clock', () => {
    // Children are ordered by start time above; that only means something when every span's times
    // come from the same clock, in which case each child lies within its parent's interval.
    const tree = receiver.spans.filter((s) => s.traceId === TRACE_ID);
    const outside = tree.flatMap((s) => {
      const parent = tree.find((p) => p.spanId === s.parentSpanId);
      return parent && (s.startNs < parent.startNs || s.endNs > parent.endNs) ? [`${s.name} outside ${parent.name}`] : [];
    });
    expect(tree.length).toBeGreaterThan(8);
    expect(outside).toEqual([]);
  });

  it('hands each upstream call a traceparent naming its own span', () => {
    const calls = up.upstream.requests.slice(0, upstreamSeen).map((r) => r.headers.traceparent);
    const spans = byName(receiver.spans, 'cg.upstream').filter((s) => s.traceId === TRACE_ID);
    expect(calls).toEqual(spans.sort((a, b) => Number(a.startNs - b.startNs)).map((s) => `00-${TRACE_ID}-${s.spanId}-01`));
  });
});

describe('a request with a reverted component', () => {
  const root = () => roots().find((s) => s.traceId !== TRACE_ID)!;

  it('starts a new trace and marks the reverted component span as an error with its reason', () => {
    const r = root();
    expect(r.parentSpanId).toBe('');
    expect(r.attributes).toEqual(expect.objectContaining({ 'cg.dialect': 'openai', 'cg.config_version': 7, 'cg.outcome': 'ok' }));
    const pipeline = childrenOf(receiver.spans, r).find((s) => s.name === 'cg.pipeline')!;
    const [format, grew] = childrenOf(receiver.spans, pipeline);
    expect(format!.attributes['cg.reverted']).toBe(false);
    expect(grew!.name).toBe('cg.component grower');
    expect(grew!.attributes).toEqual(expect.objectContaining({ 'cg.reverted': true, 'cg.revert_reason': 'grew', 'cg.saved_tokens': 0 }));
    expect(grew!.status.code).toBe(2);
  });
});

it('no span carries message content or the session id', () => {
  const all = receiver.bodies.join('\n');
  expect(all.length).toBeGreaterThan(0);
  expect(all).not.toContain(SESSION);
  for (const s of steps) expect(all).not.toContain(s.output.slice(0, 40));
  expect(all).not.toContain('padding that only adds tokens');
});
