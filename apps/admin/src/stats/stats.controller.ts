// The gateway's figures for the built-in page (/ui/), behind the same bearer and roles as the rest
// of the API. Only the embedded process has them: a standalone admin says so with its own code.
import { Controller, Get, Inject } from '@nestjs/common';
import { ADMIN_DEPS, type AdminDeps } from '../admin.options';
import { AdminError } from '../common/admin-errors';
import { Role } from '../common/auth.guard';

const WHOLE_GATEWAY = '*';

@Controller('v1/stats')
@Role('viewer')
export class StatsController {
  constructor(@Inject(ADMIN_DEPS) private readonly deps: AdminDeps) {}

  /** Every tenant's /stats document and minute series, the whole gateway's series, recent sessions. */
  @Get()
  async all() {
    const source = this.deps.gatewayStats;
    if (!source)
      throw new AdminError(
        'stats_unavailable',
        'this admin runs apart from the gateway; read /stats on each gateway replica, or the dashboards',
      );
    return {
      generated_at: new Date().toISOString(),
      tenants: await Promise.all(
        source.tenants().map(async (id) => ({ id, stats: await source.snapshot(id), minutes: source.minutes(id) })),
      ),
      minutes: source.minutes(WHOLE_GATEWAY),
      sessions: source.recentSessions(),
    };
  }
}
