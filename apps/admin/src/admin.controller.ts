// The control plane's first routes. Tenants, keys, configs, filter sets and audit arrive with the
// control-plane issue; until then the admin port answers health and who it is, behind the bearer.
import { Controller, Get, Headers, HttpException, Inject } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { ADMIN_OPTIONS, type AdminOptions } from './admin.options';

@Controller()
export class AdminController {
  constructor(@Inject(ADMIN_OPTIONS) private readonly opts: AdminOptions) {}

  @Get('healthz')
  healthz(): { ok: true } {
    return { ok: true };
  }

  @Get('v1/whoami')
  whoami(@Headers('authorization') auth: string | undefined): { role: 'admin'; resources: string[] } {
    if (!this.opts.adminToken) throw new HttpException({ error: 'ADMIN_TOKEN is not set: the control plane is locked' }, 503);
    const given = Buffer.from((auth ?? '').replace(/^Bearer\s+/i, ''));
    const want = Buffer.from(this.opts.adminToken);
    if (given.length !== want.length || !timingSafeEqual(given, want)) throw new HttpException({ error: 'invalid admin credential' }, 401);
    return { role: 'admin', resources: [] };
  }
}
