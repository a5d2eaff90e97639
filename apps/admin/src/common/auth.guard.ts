// Bearer auth and roles for every admin route. The bootstrap ADMIN_TOKEN acts as `admin`; a
// `cg_adm_…` key carries one role, looked up by its SHA-256 on every request (so a revocation
// applies at once). Roles rank viewer < operator < admin; a route names the least it needs, and a
// route that names none needs admin (a forgotten decorator fails closed). Every refused credential
// gets the one message (a revoked key must not read differently from an unknown one), and an
// address whose attempts keep failing is throttled: past its failures per minute every attempt
// from it, the right token included, waits (429 auth_throttled) until the bucket refills.
import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, SetMetadata, createParamDecorator, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ADMIN_KEY_PREFIX, apiKeysRepository, hashKey, type AdminRole } from '@context-guru/storage';
import { DEFAULT_AUTH_FAILURES_PER_MINUTE, RateLimit } from '@context-guru/engine';
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
  ip?: string;
  actor?: Actor;
}

const REFUSED = 'invalid admin credential';

export const CurrentActor = createParamDecorator((_: unknown, ctx: ExecutionContext): Actor => {
  const actor = ctx.switchToHttp().getRequest<WithActor>().actor;
  if (!actor) throw new AdminError('unauthorized', 'no authenticated actor');
  return actor;
});

const digest = (s: string) => createHash('sha256').update(s).digest();

@Injectable()
export class AuthGuard implements CanActivate {
  private readonly failures: RateLimit;

  constructor(
    private readonly reflector: Reflector,
    @Inject(ADMIN_DEPS) private readonly deps: AdminDeps,
  ) {
    this.failures = new RateLimit(deps.authFailuresPerMinute ?? DEFAULT_AUTH_FAILURES_PER_MINUTE);
  }

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const need =
      this.reflector.getAllAndOverride<AdminRole | 'public' | undefined>(ROLE_KEY, [ctx.getHandler(), ctx.getClass()]) ?? 'admin';
    if (need === 'public') return true;
    const req = ctx.switchToHttp().getRequest<WithActor>();
    const from = req.ip ?? '';
    const wait = this.failures.retryAfter(from);
    if (wait > 0) throw new AdminError('auth_throttled', `too many failed attempts from this address; retry in ${wait} s`);
    const actor = await this.authenticate(req.headers.authorization).catch((err: unknown) => {
      if (err instanceof AdminError && err.code === 'unauthorized') this.failures.take(from);
      throw err;
    });
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
      if (!key || key.role === 'tenant' || key.revokedAt) throw new AdminError('unauthorized', REFUSED);
      return { id: `key:${key.id}`, role: key.role };
    }
    // Equal-length digests, so the comparison is constant-time whatever the token's length.
    if (this.deps.adminToken && timingSafeEqual(digest(token), digest(this.deps.adminToken))) return { id: 'bootstrap', role: 'admin' };
    throw new AdminError('unauthorized', REFUSED);
  }
}
