// `npm test` provisions its own tools (scripts/provision-test-env.sh, its pretest): where it cannot
// install a missing one — not root, or no apt-get — it must stop at once and name the package,
// never let a test tier skip silently. Run as an unprivileged user with Chromium pointed away.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../../support/helm';

function provisionUnprivileged(env: Record<string, string>) {
  const script = join(ROOT, 'scripts/provision-test-env.sh');
  const asNobody = process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : [];
  const [cmd = 'bash', ...args] = [...asNobody, 'bash', script];
  return spawnSync(cmd, args, { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env } });
}

describe('the test-environment provisioning', () => {
  it('stops naming the package it cannot install', () => {
    const r = provisionUnprivileged({ CHROMIUM_PATH: '/nonexistent/chromium' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/missing: .*\bchromium\b/);
    expect(r.stderr).toContain('apt-get install');
  });

  it('does nothing when told the machine is provisioned elsewhere', () => {
    const r = provisionUnprivileged({ CHROMIUM_PATH: '/nonexistent/chromium', CG_PROVISION: 'skip' });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('CG_PROVISION=skip');
  });
});
