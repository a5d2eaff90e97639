// Step 2 of a chat request: read the body and prepare what goes upstream. An empty pipeline is a
// transparent proxy — the body is not even decoded to text, and one of a declared length is
// streamed upstream as it arrives (still checked) instead of read whole. A body the client got
// wrong is answered precisely; a fault of ours fails open (the inbound bytes are forwarded).
import type { GatewayContext } from '../../gateway-context';
import { headModel, presetLabel } from '../../observability/labels';
import {
  errorText,
  emptyReport,
  BodyText,
  WireError,
  isTransparent,
  prepareRequest,
  type PrepareDeps,
  type PrepareInput,
  type Prepared,
} from '@context-guru/engine';
import { meterModelSources } from '../../observability/model-meter';
import { createModelSources } from '../../model/model-resolver';
import { clientHints } from '../../http/forward-headers';
import { failureError } from '../../http/request-errors';
import type { ChatExchange } from './chat-exchange';
import { stop, type Forward, type Stop } from './chat-outcome';

export async function prepareStep(x: ChatExchange): Promise<Forward | Stop> {
  const { gw, req, tenant, route } = x;
  let transparent = isTransparent(tenant.built.pipeline, gw.env.injectExpand, tenant.replays);
  // A cloud route's body is signed over its bytes (SigV4): it is read whole, never streamed upstream.
  const streamed = transparent && req.streamable && !x.shadow?.wholeBody && !route.cloud;
  // Admission is decided on arrival, before the body is read: past the gate's bound the request
  // is served without new compression work (shed) instead of adding to the backlog.
  const gated = !transparent;
  const admitted = gated && gw.compression.admit();
  let hadTurn = false;
  let held = false;
  let reading = false;
  // A streamed body is read as it goes upstream: it holds its place (and an upstream connection) too.
  const client = `${tenant.id} ${req.remoteAddress}`;
  const doneReading = () => {
    if (reading) gw.bodies.readDone(client);
    reading = false;
  };
  const releaseBody = () => {
    doneReading();
    if (held) gw.bodies.give();
    held = false;
  };
  try {
    let inbound = req.body;
    await gw.bodies.take(client);
    held = reading = true;
    if (!streamed) {
      inbound = await req.readBody();
      doneReading();
    }
    if (admitted) {
      await gw.compression.turn();
      hadTurn = true;
    }
    const input = transparent ? null : chatInput(x, inbound, !admitted);
    const raw = input?.raw ?? '';
    let prepared: Prepared;
    try {
      prepared = input ? await prepareRequest(prepareDeps(gw), input) : passthrough(x);
    } catch (err) {
      if (err instanceof WireError) {
        releaseBody();
        return stop('bad_request', failureError(route.dialect, err), null);
      }
      gw.log.warn('decoding failed open; forwarding the original body', { error: errorText(err) });
      transparent = true;
      prepared = passthrough(x);
      prepared.report.failOpen = 'internal_error';
    }
    const report = prepared.report;
    report.preset = presetLabel(tenant);
    report.modelCalls = x.modelCalls;
    if (transparent && Buffer.isBuffer(inbound)) report.model = headModel(inbound);
    const named = pathModel(x);
    if (named !== undefined) report.model = named;
    x.trace?.prepared({ tenant: tenant.id, configVersion: tenant.configVersion, preset: report.preset, session: prepared.session }, report);
    return { kind: 'forward', prepared, transparent, streamed, inbound, raw, releaseBody };
  } catch (err) {
    releaseBody();
    throw err;
  } finally {
    if (gated) gw.compression.leave(admitted, hadTurn);
  }
}

/**
 * The body as text: only the bytes after what a cached turn shares are decoded (the turn cache's).
 * A fault of ours there costs the whole decode, never the request.
 */
function bodyText(x: ChatExchange, inbound: Buffer): BodyText {
  try {
    return x.gw.turns.text(x.route.dialect, inbound, x.tenant.id);
  } catch (err) {
    x.gw.log.warn('the turn cache failed to decode; decoding the whole body', { error: errorText(err) });
    return BodyText.of(inbound.toString('utf8'));
  }
}

/** What request preparation needs from the gateway (the chat and /compact routes share it). */
export function prepareDeps(gw: GatewayContext): PrepareDeps {
  const { store, turns, repeats, clock, log, learned, keys } = gw;
  const rewrites = { paybackTurns: gw.env.rewritePaybackTurns, prices: gw.usage.prices };
  return { store, ...(keys && { ids: keys }), turns, repeats, clock, log, injectMode: gw.env.injectExpand, learned, rewrites };
}

/** The body as text: a repeat of the session's last body is recognised on its bytes and not decoded again. */
function chatInput(x: ChatExchange, bytes: Buffer, shed: boolean): PrepareInput {
  const { gw, req, tenant, route } = x;
  const { sessionHeader, bypassHeader } = clientHints(req.headers);
  const slot = { tenant, dialect: route.dialect, shed, sessionHeader, bypassHeader };
  const repeated = gw.repeats.textOf(slot, bytes);
  const text = repeated === undefined ? bodyText(x, bytes) : undefined;
  return {
    ...slot,
    route: route.dialect,
    raw: repeated ?? text?.whole() ?? '',
    text,
    bytes,
    pipeline: tenant.built.pipeline,
    cacheMode: gw.env.cacheMode,
    model: pathModel(x),
    models: (body) =>
      meterModelSources(
        createModelSources(
          gw.env.model,
          {
            dialect: route.dialect,
            model: pathModel(x) ?? body.model,
            upstreamBase: route.upstreamBase,
            headers: req.headers,
          },
          gw.models,
        ),
        x.modelCalls,
        gw.stats.spend(tenant.id),
      ),
  };
}

/** Gemini, Bedrock and Vertex name the model in the path, not the body. */
function pathModel(x: ChatExchange): string | undefined {
  return x.gemini?.model ?? x.route.cloud?.target.model;
}

function passthrough(x: ChatExchange): Prepared {
  return { session: '', outgoing: '', advertised: false, report: emptyReport(x.route.dialect, x.tenant.id) };
}
