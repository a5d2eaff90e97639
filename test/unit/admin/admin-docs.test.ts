// Anti-drift: every route the admin controllers declare is documented in docs/admin-api.md (with
// the role its decorator names), and the ops-expand window slides.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { RequestMethod } from '@nestjs/common';
import { AdminModule } from '@context-guru/admin';
import { MinuteRateLimiter } from '../../../apps/admin/src/ops-expand/rate-limiter';
import { ROLE_KEY } from '../../../apps/admin/src/common/auth.guard';

type Fn = (...a: unknown[]) => unknown;

function declaredRoutes(): Array<{ route: string; role: string }> {
  const mod = AdminModule.forRoot({ sql: undefined as never });
  const out: Array<{ route: string; role: string }> = [];
  for (const ctrl of mod.controllers ?? []) {
    const base = String(Reflect.getMetadata('path', ctrl) ?? '');
    const proto = (ctrl as { prototype: Record<string, Fn> }).prototype;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const fn = proto[name]!;
      const method = Reflect.getMetadata('method', fn) as RequestMethod | undefined;
      if (name === 'constructor' || method === undefined) continue;
      const sub = String(Reflect.getMetadata('path', fn) ?? '');
      const full = `/${[base, sub].filter((p) => p && p !== '/').join('/')}`.replace(/:(\w+)/g, '{$1}');
      const role = (Reflect.getMetadata(ROLE_KEY, fn) ?? Reflect.getMetadata(ROLE_KEY, ctrl) ?? 'admin') as string;
      out.push({ route: `${RequestMethod[method]} ${full}`, role });
    }
  }
  return out;
}

describe('admin API docs', () => {
  const doc = readFileSync(path.join(__dirname, '../../../docs/admin-api.md'), 'utf8');
  const rows = doc.split('\n').filter((l) => l.startsWith('| `'));

  it('document every declared route with its role', () => {
    const routes = declaredRoutes();
    expect(routes.length).toBeGreaterThanOrEqual(28);
    for (const { route, role } of routes) {
      const row = rows.find((l) => l.includes(`\`${route}\``) || l.includes(`\`${route} `) || l.includes(`\`${route}?`));
      expect([route, row !== undefined]).toEqual([route, true]);
      const documented = row!.split('|')[2]!.trim();
      expect([route, documented]).toEqual([route, role === 'public' ? 'none' : role]);
    }
  });
});

describe('MinuteRateLimiter', () => {
  it('allows n per sliding minute per key', () => {
    let now = 0;
    const rl = new MinuteRateLimiter(2, () => now);
    expect([rl.take('a'), rl.take('a'), rl.take('a'), rl.take('b')]).toEqual([true, true, false, true]);
    now = 59_999;
    expect(rl.take('a')).toBe(false);
    now = 60_001;
    expect([rl.take('a'), rl.take('a'), rl.take('a')]).toEqual([true, true, false]);
  });
});
