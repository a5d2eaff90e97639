// The admin app: one controller per resource, services over the repositories of
// libs/storage/src/control, one guard for bearer auth and roles, one filter for the error shape.
import 'reflect-metadata';
import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { ADMIN_DEPS, type AdminDeps } from './admin.options';
import { AdminKeysController } from './admin-keys/admin-keys.controller';
import { AuditController } from './audit/audit.controller';
import { AuthGuard } from './common/auth.guard';
import { ControlWriter } from './common/control-writer';
import { AdminErrorFilter } from './common/error.filter';
import { ConfigsController } from './configs/configs.controller';
import { ConfigsService } from './configs/configs.service';
import { DryRunController } from './dry-run/dry-run.controller';
import { DryRunService } from './dry-run/dry-run.service';
import { FiltersController } from './filters/filters.controller';
import { FiltersService } from './filters/filters.service';
import { HealthController } from './health/health.controller';
import { KeysController } from './keys/keys.controller';
import { KeysService } from './keys/keys.service';
import { OpsExpandController } from './ops-expand/ops-expand.controller';
import { OpsExpandService } from './ops-expand/ops-expand.service';
import { ReplicasController } from './replicas/replicas.controller';
import { ShadowController } from './shadow/shadow.controller';
import { ShadowService } from './shadow/shadow.service';
import { SavingsController } from './savings/savings.controller';
import { SavingsService } from './savings/savings.service';
import { StatsController } from './stats/stats.controller';
import { TenantsController } from './tenants/tenants.controller';
import { ErasureService } from './tenants/erasure.service';
import { TenantsService } from './tenants/tenants.service';
import { UiController } from './ui/ui.controller';

@Module({})
export class AdminModule {
  static forRoot(deps: AdminDeps): DynamicModule {
    return {
      module: AdminModule,
      controllers: [
        HealthController,
        AdminKeysController,
        TenantsController,
        KeysController,
        ConfigsController,
        FiltersController,
        DryRunController,
        OpsExpandController,
        AuditController,
        ReplicasController,
        ShadowController,
        SavingsController,
        StatsController,
        UiController,
      ],
      providers: [
        { provide: ADMIN_DEPS, useValue: deps },
        { provide: APP_GUARD, useClass: AuthGuard },
        ControlWriter,
        TenantsService,
        ErasureService,
        KeysService,
        ConfigsService,
        FiltersService,
        DryRunService,
        OpsExpandService,
        ShadowService,
        SavingsService,
      ],
    };
  }
}

export async function createAdminServer(deps: AdminDeps): Promise<NestFastifyApplication> {
  // ignoreTrailingSlash: the page's address is /ui/ (so its relative assets resolve under /ui).
  const adapter = new FastifyAdapter({
    logger: false,
    bodyLimit: deps.bodyLimitBytes ?? 8 * 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true },
  });
  const app = await NestFactory.create<NestFastifyApplication>(AdminModule.forRoot(deps), adapter, { logger: ['warn', 'error'] });
  app.useGlobalFilters(
    new AdminErrorFilter((err) => deps.log?.error('admin request failed', { err: err instanceof Error ? err.stack : String(err) })),
  );
  await app.init();
  return app;
}
