// The routes the admin controllers declare, read from Nest's decorator metadata, with the least
// role each names: the docs test and the role test walk this list, so a new route is covered.
import { RequestMethod } from '@nestjs/common';
import { AdminModule } from '@context-guru/admin';
import { ROLE_KEY } from '../../apps/admin/src/common/auth.guard';

type Fn = (...a: unknown[]) => unknown;

export interface DeclaredRoute {
  method: string;
  /** With `{param}` placeholders. */
  path: string;
  role: 'public' | 'viewer' | 'operator' | 'admin';
}

export function declaredRoutes(): DeclaredRoute[] {
  const mod = AdminModule.forRoot({ sql: undefined as never });
  const out: DeclaredRoute[] = [];
  for (const ctrl of mod.controllers ?? []) {
    const base = String(Reflect.getMetadata('path', ctrl) ?? '');
    const proto = (ctrl as { prototype: Record<string, Fn> }).prototype;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const fn = proto[name]!;
      const method = Reflect.getMetadata('method', fn) as RequestMethod | undefined;
      if (name === 'constructor' || method === undefined) continue;
      const sub = String(Reflect.getMetadata('path', fn) ?? '');
      const path = `/${[base, sub].filter((p) => p && p !== '/').join('/')}`.replace(/:(\w+)/g, '{$1}');
      const role = (Reflect.getMetadata(ROLE_KEY, fn) ?? Reflect.getMetadata(ROLE_KEY, ctrl) ?? 'admin') as DeclaredRoute['role'];
      out.push({ method: RequestMethod[method]!, path, role });
    }
  }
  return out;
}
