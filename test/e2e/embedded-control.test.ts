// The control plane end to end in the embedded process (`npm start`): an operator creates two
// tenants with different presets (one through the CLI), traffic with each key is compressed per its
// own config, a pushed filter set applies without a restart, rollback restores the previous
// behaviour, and an ops expand returns an original and shows up in the verified audit log.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { useEmbedded } from '../support/embedded-harness';
import { ACME_FILTER_YAML, acmeBuildRequest } from '../support/admin-fixtures';
import { agentSteps, openaiTurn } from '../support/transcripts';

jest.setTimeout(120_000);

const TOKEN = 'embedded-control-token-0123456789';
const ROOT = path.join(__dirname, '../..');
const run = promisify(execFile);
const MARKER = /<<cg:([0-9a-f]{16})>>/;

describe('the control plane in the embedded process', () => {
  const running = useEmbedded('embedded-ctl', { ADMIN_TOKEN: TOKEN, PRESET: 'off' });
  const admin = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(running().adminUrl + p, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return (await res.json()) as any;
  };
  const cli = async (...args: string[]) => {
    const r = await run(process.execPath, ['-r', './scripts/register-ts.cjs', 'apps/admin/src/cli/cli.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ADMIN_URL: running().adminUrl, ADMIN_TOKEN: TOKEN },
    });
    return JSON.parse(r.stdout);
  };
  const compact = async (key: string, body: unknown) => {
    const res = await fetch(`${running().gatewayUrl}/compact?provider=openai&cache=off`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-context-guru-key': key, 'x-context-guru-session': 'ctl-1' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return res.text();
  };
  /** The change is applied asynchronously after the announcement: ask until it shows (bounded). */
  const eventually = async (probe: () => Promise<boolean>) => {
    for (let i = 0; i < 200; i++) {
      if (await probe()) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('the change was not applied');
  };

  it('serves each tenant its own config, applies filter pushes and rollbacks live, and records ops expands', async () => {
    const sample = openaiTurn(agentSteps(12, 4), 12);
    const raw = JSON.stringify(sample);
    await admin('POST', '/v1/tenants', { id: 'alpha', name: 'Alpha' });
    const alphaKey = (await admin('POST', '/v1/tenants/alpha/keys', { label: 'a' })).key as string;
    await admin('POST', '/v1/tenants/alpha/configs', { document: { preset: 'safe' }, activate: true });
    await cli('tenant', 'create', 'beta', '--name', 'Beta');
    const betaKey = (await cli('key', 'issue', 'beta')).key as string;
    await admin('POST', '/v1/tenants/beta/configs', { document: { preset: 'agent' }, activate: true });

    let betaOut = '';
    await eventually(async () => MARKER.test((betaOut = await compact(betaKey, sample))));
    expect(betaOut.length).toBeLessThan(raw.length);
    const alphaOut = await compact(alphaKey, sample);
    expect(alphaOut).not.toMatch(MARKER); // safe: format + cacheinject, nothing offloaded

    // A filter set pushed for beta with a pipeline that runs it applies without a restart.
    await admin('PUT', '/v1/tenants/beta/filters/acme', { yaml: ACME_FILTER_YAML, activate: true });
    const v2 = await admin('POST', '/v1/tenants/beta/configs', { document: { pipeline: ['cmdfilter'] }, activate: true });
    expect(v2.version).toBe(2);
    const build = acmeBuildRequest(300);
    await eventually(async () => !(await compact(betaKey, build)).includes('progress 150%'));
    expect(await compact(alphaKey, build)).toContain('progress 150%'); // alpha untouched by beta's filters

    // Rollback restores the previous behaviour.
    await cli('config', 'rollback', 'beta');
    await eventually(async () => MARKER.test(await compact(betaKey, sample)));

    // Ops expand: beta's original, never through alpha; on the verified record.
    const id = MARKER.exec(betaOut)![1]!;
    const got = await admin('POST', '/v1/ops/expand', { tenant: 'beta', id, reason: 'incident 12' });
    expect(raw).toContain(JSON.stringify(got.original).slice(1, 40));
    expect((await admin('POST', '/v1/ops/expand', { tenant: 'alpha', id, reason: 'incident 12' })).error.code).toBe('not_found');
    expect((await admin('GET', '/v1/audit?action=ops.expand'))[0]).toMatchObject({ tenant: 'beta', target: id, reason: 'incident 12' });
    expect((await admin('GET', '/v1/audit/verify')).ok).toBe(true);
  });
});
