// The gateway's public surface, for the composition entry (apps/embedded) and the admin's dry-run.
// Nothing else of the gateway is imported from outside it; the gateway itself imports no app.
export { parseEnv, type Env } from './env';
export { EnvError, type EnvProblem } from './env-errors';
export { envReaders, type UrlKind } from './env-readers';
export { DEFAULT_AUTH_FAILURES_PER_MINUTE, RateLimit } from './rate-limit';
export { createGatewayContext, type GatewayContext, type ContextOverrides } from './gateway-context';
export { createGatewayServer, listenGateway } from './server';
export { createLogger, type Logger } from './observability/logger';
export { prepareRequest, type PrepareDeps, type PrepareInput, type Prepared } from './proxy/prepare-request';
export { createTenantRuntime, type TenantRuntime } from './tenancy/tenant-runtime';
export { prepareDetached, type DetachedRun } from './shadow/detached-prepare';
export { KeepNothingStore } from './shadow/keep-nothing.store';
export { comparisonView } from './shadow/shadow-view';
export { closeOnSignal } from './shutdown';
export { exitOnBootFailure } from './boot-failure';
export { tuneHeap } from './heap-tuning';
export { statsDocument } from './ops/stats-document';
