import 'reflect-metadata';
import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AdminController } from './admin.controller';
import { ADMIN_OPTIONS, type AdminOptions } from './admin.options';

@Module({})
export class AdminModule {
  static forRoot(opts: AdminOptions): DynamicModule {
    return { module: AdminModule, controllers: [AdminController], providers: [{ provide: ADMIN_OPTIONS, useValue: opts }] };
  }
}

export async function createAdminServer(opts: AdminOptions): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(AdminModule.forRoot(opts), new FastifyAdapter(), { logger: ['warn', 'error'] });
  await app.init();
  return app;
}
