// Bearer auth and roles for every admin route. The bootstrap ADMIN_TOKEN acts as `admin`; a
// `cg_adm_…` key carries one role, looked up by its SHA-256 on every request (so a revocation
// applies at once). Roles rank viewer < operator < admin; a route names the least it needs, and a
// route that names none needs admin (a forgotten decorator fails closed).
import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, SetMetadata, createParamDecorator, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ADMIN_KEY_PREFIX, apiKeysRepository, hashKey, type AdminRole } from '@context-guru/storage';
import { ADMIN_DEPS, type AdminDeps } from '../admin.options';
import { AdminError } from './admin-errors';

/** @internal exported for tests */
export const ROLE_KEY = 'cg-admin-role';
const RANK: Record<AdminRole, number> = { viewer: 0, operator: 1, admin: 2 };

/** The least role a route needs; `public` skips authentication (health only). */
export const Role = (role: AdminRole | 'public') => SetMetadata(ROLE_KEY, role);

export interface Actor {
  /** Recorded in the audit log: `bootstrap` or `key:<admin key id>`. */
  id: string;
  role: AdminRole;
}

interface WithActor {
  headers: Record<string, string | string[] | undefined>;
  actor?: Actor;
}

export const CurrentActor = createParamDecorator((_: unknown, ctx: ExecutionContext): Actor => {
  const actor = ctx.switchToHttp().getRequest<WithActor>().actor;
  if (!actor) throw new AdminError('unauthorized', 'no authenticated actor');
  return actor;
});

const digest = (s: string) => createHash('sha256').update(s).digest();

@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(ADMIN_DEPS) private readonly deps: AdminDeps,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const need =
      this.reflector.getAllAndOverride<AdminRole | 'public' | undefined>(ROLE_KEY, [ctx.getHandler(), ctx.getClass()]) ?? 'admin';
    if (need === 'public') return true;
    const req = ctx.switchToHttp().getRequest<WithActor>();
    const actor = await this.authenticate(req.headers.authorization);
    if (RANK[actor.role] < RANK[need])
      throw new AdminError('forbidden', `this route needs the ${need} role; the credential has ${actor.role}`);
    req.actor = actor;
    return true;
  }

  private async authenticate(header: string | string[] | undefined): Promise<Actor> {
    const raw = Array.isArray(header) ? header[0] : header;
    const [, token] = /^Bearer\s+(\S+)\s*$/i.exec(raw ?? '') ?? [];
    if (token === undefined) throw new AdminError('unauthorized', 'missing bearer token (Authorization: Bearer …)');
    if (token.startsWith(ADMIN_KEY_PREFIX)) {
      const key = await apiKeysRepository.findByHash(this.deps.sql, hashKey(token));
      if (!key || key.role === 'tenant') throw new AdminError('unauthorized', 'unknown admin key');
      if (key.revokedAt) throw new AdminError('unauthorized', 'this admin key was revoked');
      return { id: `key:${key.id}`, role: key.role };
    }
    // Equal-length digests, so the comparison is constant-time whatever the token's length.
    if (this.deps.adminToken && timingSafeEqual(digest(token), digest(this.deps.adminToken))) return { id: 'bootstrap', role: 'admin' };
    throw new AdminError('unauthorized', 'invalid admin credential');
  }
}
