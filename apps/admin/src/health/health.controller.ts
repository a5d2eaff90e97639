// Liveness (the process answers), readiness (the database answers and its schema is this build's)
// and who the bearer is.
import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ADMIN_DEPS, type AdminDeps } from '../admin.options';
import { CurrentActor, Role, type Actor } from '../common/auth.guard';

@Controller()
export class HealthController {
  constructor(@Inject(ADMIN_DEPS) private readonly deps: AdminDeps) {}

  @Get('healthz')
  @Role('public')
  healthz(): { ok: true } {
    return { ok: true };
  }

  @Get('readyz')
  @Role('public')
  async readyz(@Res() reply: FastifyReply): Promise<void> {
    let database = 'ok';
    let schema;
    try {
      await this.deps.sql.query('SELECT 1');
      schema = await this.deps.schema?.();
    } catch {
      database = 'unavailable';
    }
    const ready = database === 'ok' && (schema === undefined || schema.ok);
    void reply.code(ready ? 200 : 503).send({ ready, database, ...(schema ? { schema } : {}) });
  }

  /** Who the bearer is: any valid credential. */
  @Get('v1/whoami')
  @Role('viewer')
  whoami(@CurrentActor() actor: Actor): Actor {
    return actor;
  }
}
