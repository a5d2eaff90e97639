// The context-guru-admin CLI as an operator runs it: a separate node process against a running
// admin API, for every common operation.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ADMIN_TOKEN, startAdmin, type AdminHarness } from '../../support/admin-harness';
import { agentSteps, openaiTurn } from '../../support/transcripts';

jest.setTimeout(120_000);

const ROOT = path.join(__dirname, '../../..');
const run = promisify(execFile);

describe('context-guru-admin', () => {
  let h: AdminHarness;
  let dir: string;
  const cli = async (args: string[], token = ADMIN_TOKEN): Promise<{ code: number; out: any; err: string }> => {
    try {
      const r = await run(process.execPath, ['-r', './scripts/register-ts.cjs', 'apps/admin/src/cli/cli.ts', ...args], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', ADMIN_URL: h.url, ADMIN_TOKEN: token },
      });
      return { code: 0, out: JSON.parse(r.stdout), err: r.stderr };
    } catch (e) {
      const x = e as { code: number; stdout: string; stderr: string };
      return { code: x.code, out: x.stdout, err: x.stderr };
    }
  };

  beforeAll(async () => {
    h = await startAdmin();
    dir = mkdtempSync(path.join(tmpdir(), 'cg-cli-'));
    writeFileSync(path.join(dir, 'safe.yaml'), 'preset: safe\n');
    writeFileSync(path.join(dir, 'agent.yaml'), 'preset: agent\n');
    writeFileSync(path.join(dir, 'bad.yaml'), 'preset: nope\n');
    writeFileSync(path.join(dir, 'request.json'), JSON.stringify(openaiTurn(agentSteps(12, 4), 12)));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await h.close();
  });

  it('creates a tenant, issues a key, pushes, activates, rolls back, dry-runs, expands and verifies', async () => {
    expect((await cli(['tenant', 'create', 'acme', '--name', 'Acme'])).out).toMatchObject({ id: 'acme', name: 'Acme' });
    expect((await cli(['key', 'issue', 'acme', '--label', 'ci'])).out.key).toMatch(/^cg_live_/);
    expect((await cli(['config', 'push', 'acme', path.join(dir, 'safe.yaml'), '--activate'])).out).toMatchObject({
      version: 1,
      active: true,
    });
    expect((await cli(['config', 'push', 'acme', path.join(dir, 'agent.yaml')])).out).toMatchObject({ version: 2, active: false });
    expect((await cli(['config', 'activate', 'acme', '2'])).out).toMatchObject({ version: 2, previous: 1 });
    expect((await cli(['config', 'diff', 'acme', '1', '2'])).out.preset).toEqual({ from: 'safe', to: 'agent' });
    expect((await cli(['config', 'rollback', 'acme'])).out).toMatchObject({ version: 1, previous: 2 });
    const filter = path.join(ROOT, 'test/fixtures/admin/acme-build.yaml');
    expect((await cli(['filter', 'push', 'acme', 'acme', filter, '--activate'])).out).toMatchObject({
      name: 'acme',
      version: 1,
      active: true,
    });

    const dry = await cli(['dry-run', 'acme', 'openai', path.join(dir, 'request.json'), '--config', path.join(dir, 'agent.yaml')]);
    expect(dry.out.config.source).toBe('candidate');
    expect(dry.out.markers.length).toBeGreaterThan(0);

    await h.store.putStash('acme', 'acme:s', [{ id: 'cccccccccccccccc', text: 'the original' }]);
    expect((await cli(['expand', 'acme', 'cccccccccccccccc', '--reason', 'ticket 9'])).out).toEqual({
      id: 'cccccccccccccccc',
      original: 'the original',
    });
    expect((await cli(['audit', 'verify'])).out).toEqual({ ok: true, checked: 8 });
    expect((await cli(['audit', 'list', '--action', 'ops.expand'])).out[0]).toMatchObject({
      reason: 'ticket 9',
      target: 'cccccccccccccccc',
    });
  });

  it('prints the API error as code: message and exits non-zero', async () => {
    const bad = await cli(['config', 'push', 'acme', path.join(dir, 'bad.yaml')]);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/^invalid_document: document\.preset: unknown preset "nope"/);
    const noReason = await cli(['expand', 'acme', 'cccccccccccccccc']);
    expect([noReason.code, noReason.err]).toEqual([2, 'usage: expand needs --reason (it is recorded in the audit log)\n']);
    expect((await cli(['tenant', 'list'], 'wrong')).err).toMatch(/^unauthorized: /);
  });

  it('answers a malformed command line as a usage error, not a crash', async () => {
    const unknown = await cli(['tenant', 'list', '--bogus']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/^usage: Unknown option '--bogus'/);
    const noValue = await cli(['key', 'issue', 'acme', '--label']);
    expect(noValue.code).toBe(2);
    expect(noValue.err).toMatch(/^usage: Option '--label <value>' argument missing/);
  });
});
