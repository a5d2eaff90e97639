// One upstream call of a chat request (the first, or an expand continuation): timed into the
// upstream metrics, traced as its own span, and cancelled when the client goes away.
import type { Readable } from 'node:stream';
import { type UpstreamReply } from '@context-guru/engine';
import { recordUpstream } from '../../observability/metrics-record';
import type { ClientAbort } from '../../http/upstream.client';
import type { ChatExchange } from './chat-exchange';
import { cloudHeaders, fromCloud } from '../../cloud/cloud-upstream';

/** The call was not made: the client had already gone away. */
class ClientGone extends Error {
  constructor() {
    super('the client went away before the upstream call');
  }
}

export type UpstreamCall = (body: string | Buffer | readonly Buffer[] | Readable) => Promise<UpstreamReply>;

export function upstreamCall(x: ChatExchange, url: string, headers: Record<string, string>, abort: ClientAbort): UpstreamCall {
  const { gw, route, trace } = x;
  // `url`: the route's, or the Gemini path this request named (geminiUpstreamUrl).
  return async (body) => {
    // A continuation the expand loop asks for after the client went away is never sent.
    if (abort.aborted) throw new ClientGone();
    const t0 = performance.now();
    const span = trace?.upstream(headers);
    try {
      const sent = span?.headers ?? headers;
      const cloud = route.cloud;
      const r = cloud
        ? fromCloud(cloud.target, await gw.upstream.post(url, await cloudHeaders(cloud, sent, body), body, abort))
        : await gw.upstream.post(url, sent, body, abort);
      recordUpstream(gw.metrics, route.dialect, r.status, (performance.now() - t0) / 1000);
      span?.end(r.status);
      return r;
    } catch (err) {
      recordUpstream(gw.metrics, route.dialect, 'error', (performance.now() - t0) / 1000);
      span?.end('error');
      throw err;
    }
  };
}
