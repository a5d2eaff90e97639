// The Bedrock and Vertex routes are thin adapters over the Anthropic one: the path is decoded into
// the model and the upstream URL, and the request then takes the very same steps (components, cache
// awareness, the expand loop, stats) — the body is Anthropic Messages either way. What differs is
// at the edges only: the gateway's own credentials on each upstream call, and on Bedrock the
// binary event stream, read as Anthropic SSE inside and framed again for the client.
import type { GatewayContext } from '../gateway-context';
import { handleChat } from './chat.route';
import type { ChatRoute } from './chat/chat-exchange';
import { gatewayError } from '../http/gateway-errors';
import type { HotReply, HotRequest } from '../http/hot-http';
import { sendError } from '../http/request-errors';
import { createCloudAuths } from '../cloud/cloud-auth';
import { bedrockTarget, CloudPathError, vertexTarget, type CloudProvider } from '../cloud/cloud-path';

export function cloudChatHandler(gw: GatewayContext, provider: CloudProvider) {
  const auth = createCloudAuths(gw.env.cloud)[provider];
  return async (req: HotRequest, reply: HotReply): Promise<HotReply> => {
    const q = req.url.indexOf('?');
    const path = q < 0 ? req.url : req.url.slice(0, q);
    let route: ChatRoute;
    try {
      const target = provider === 'bedrock' ? bedrockTarget(path, gw.env.cloud.bedrock) : vertexTarget(path, gw.env.cloud.vertex);
      route = {
        dialect: 'anthropic',
        path: target.pattern,
        upstreamBase: gw.env.anthropicUpstream,
        upstreamUrl: target.upstreamUrl,
        cloud: { target, auth },
      };
    } catch (err) {
      if (!(err instanceof CloudPathError)) throw err;
      // Read (and drop) the body first, so the answer is not lost to a connection reset.
      await req.readBody().catch(() => undefined);
      return sendError(reply, gatewayError('anthropic', 'route_not_found', err.message));
    }
    return handleChat(gw, route, req, reply);
  };
}
