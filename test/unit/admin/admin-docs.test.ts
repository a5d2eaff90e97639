// Anti-drift: every route the admin controllers declare is documented in docs/admin-api.md (with
// the role its decorator names), and the ops-expand window slides.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { declaredRoutes } from '../../support/admin-routes';

describe('admin API docs', () => {
  const doc = readFileSync(path.join(__dirname, '../../../docs/admin-api.md'), 'utf8');
  const rows = doc.split('\n').filter((l) => l.startsWith('| `'));

  it('document every declared route with its role', () => {
    const routes = declaredRoutes();
    expect(routes.length).toBeGreaterThanOrEqual(28);
    for (const { method, path: p, role } of routes) {
      const route = `${method} ${p}`;
      const row = rows.find((l) => l.includes(`\`${route}\``) || l.includes(`\`${route} `) || l.includes(`\`${route}?`));
      expect([route, row !== undefined]).toEqual([route, true]);
      const documented = row!.split('|')[2]!.trim();
      expect([route, documented]).toEqual([route, role === 'public' ? 'none' : role]);
    }
  });
});
