// The gateway's public surface, for the composition entry (apps/embedded). The admin and the
// benchmarks use the request engine (@context-guru/engine), never the gateway; the gateway itself
// imports no app.
export { parseEnv, type Env } from './env';
export { createGatewayContext, type GatewayContext, type ContextOverrides } from './gateway-context';
export { createGatewayServer, listenGateway } from './server';
export { closeOnSignal } from './shutdown';
export { statsDocument } from './ops/stats-document';
export { StatsRollup } from '@context-guru/engine';
