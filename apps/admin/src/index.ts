// Public surface of @context-guru/admin: the server factory and what it needs from its host.
export { createAdminServer, AdminModule } from './admin.module';
export type { AdminDeps, AdminLogger, GatewayStatsSource } from './admin.options';
export { ADMIN_ERRORS, type AdminErrorCode } from './common/admin-errors';
export { parseAdminEnv, type AdminEnv } from './admin-env';
