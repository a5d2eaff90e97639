// One chat request on its way through the gateway, as plain data every step reads: the route it
// came in on, the tenant it belongs to, its trace, and the model calls the pipeline made for it.
import type { GatewayContext } from '../../gateway-context';
import type { ModelCall, TenantRuntime, Dialect } from '@context-guru/engine';
import type { RequestTrace } from '../../observability/request-trace';
import type { ShadowTicket } from '../../shadow/shadow-runner';
import type { HotRequest } from '../../http/hot-http';
import { geminiCall, type GeminiCall } from '../gemini-path';
import type { CloudAuth } from '../../cloud/cloud-auth';
import type { CloudTarget } from '../../cloud/cloud-path';

const UPSTREAM_PATH: Record<Dialect, string> = {
  openai: '/v1/chat/completions',
  anthropic: '/v1/messages',
  responses: '/v1/responses',
  // The model and method are in the path: each request's own (geminiCall), this is its route's name.
  gemini: '/v1beta/models',
};
const ROUTE: Record<Dialect, string> = {
  openai: '/openai/v1/chat/completions',
  anthropic: '/anthropic/v1/messages',
  responses: '/openai/v1/responses',
  gemini: '/gemini/v1beta/models',
};

const UPSTREAM_BASE: Record<Dialect, (gw: GatewayContext) => string> = {
  openai: (gw) => gw.env.openaiUpstream,
  responses: (gw) => gw.env.openaiUpstream,
  anthropic: (gw) => gw.env.anthropicUpstream,
  gemini: (gw) => gw.env.geminiUpstream,
};

/** A chat route, fixed at boot: its dialect, its own path and the provider URL it forwards to. */
export interface ChatRoute {
  dialect: Dialect;
  path: string;
  /** The provider's origin (model-backed components call it with the client's own credentials). */
  upstreamBase: string;
  upstreamUrl: string;
  /** A Bedrock or Vertex route: the model and URL its path named, and the gateway's credentials for that cloud. */
  cloud?: { target: CloudTarget; auth: CloudAuth };
}

export function chatRoute(gw: GatewayContext, dialect: Dialect): ChatRoute {
  const upstreamBase = UPSTREAM_BASE[dialect](gw);
  return { dialect, path: ROUTE[dialect], upstreamBase, upstreamUrl: `${upstreamBase}${UPSTREAM_PATH[dialect]}` };
}

export interface ChatExchange {
  readonly gw: GatewayContext;
  readonly route: ChatRoute;
  readonly req: HotRequest;
  /** performance.now() when the request arrived. */
  readonly started: number;
  readonly tenant: TenantRuntime;
  readonly trace: RequestTrace | undefined;
  /** Calls the pipeline's model-backed components made, billed to this request. */
  readonly modelCalls: ModelCall[];
  /** Picked for shadow evaluation of the tenant's candidate config (apps/gateway/src/shadow). */
  readonly shadow: ShadowTicket | undefined;
  /** A Gemini request: the model, method and stream form its path and query name. */
  readonly gemini?: GeminiCall;
}

export function openExchange(gw: GatewayContext, route: ChatRoute, req: HotRequest, tenant: TenantRuntime, started: number): ChatExchange {
  const trace = gw.tracing?.begin(req.headers, route.dialect, route.path);
  const gemini = route.dialect === 'gemini' ? geminiCall(route.upstreamBase, req.url) : null;
  return { gw, route, req, started, tenant, trace, modelCalls: [], shadow: gw.shadow.runner.pick(tenant), ...(gemini ? { gemini } : {}) };
}
