export { createAdminServer, AdminModule } from './admin.module';
export type { AdminOptions } from './admin.options';
