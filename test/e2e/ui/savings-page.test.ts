// The built-in savings page in a real browser (Debian chromium through playwright-core): the
// embedded process `npm start` runs prints a one-time URL, a short session goes through the
// gateway, and the page shows the same figures as /stats and the admin API; a wrong token shows a
// clear message and no data. The screenshot it takes is the one the README shows.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { anthropicMessage } from '../../support/fake-upstream-json';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream';
import { freePort } from '../../support/replicas';
import { npmStartCommand } from '../../support/start-command';
import { agentSteps, anthropicTurn } from '../../support/transcripts';

jest.setTimeout(180_000);

const ROOT = path.join(__dirname, '../../..');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const OUT = path.join(ROOT, 'test-output', 'ui');
const SESSION = 'laptop-session-1';
const TURNS = 4;

/** What the page's globals look like from here: the test's own TypeScript has no DOM library. */
interface PageGlobals {
  document: { documentElement: { scrollWidth: number } };
  innerWidth: number;
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');

/** Starts what `npm start` runs (node, its flags, the embedded entry) and reads the page's URL from what it prints. */
async function startEmbeddedProcess(env: Record<string, string>): Promise<{ proc: ChildProcess; uiUrl: string; output: () => string }> {
  const start = npmStartCommand(ROOT);
  const proc = spawn(process.execPath, [...start.nodeArgs, path.join(ROOT, start.entry)], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const m = /savings page \(ADMIN_TOKEN generated for this run\): (\S+)/.exec(out);
    if (m) return { proc, uiUrl: m[1]!, output: () => out };
    if (proc.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  proc.kill('SIGKILL');
  throw new Error(`the embedded process printed no page URL:\n${out}`);
}

/** The first figures arrived (the page's CSP forbids string evaluation, so wait through locators). */
async function drawn(page: Page): Promise<void> {
  await page.locator('[data-testid="requests"]').filter({ hasNotText: '–' }).waitFor();
}

async function text(page: Page, id: string): Promise<string> {
  return (await page.locator(`[data-testid="${id}"]`).first().textContent()) ?? '';
}

describe('the savings page (embedded default, real browser)', () => {
  let upstream: FakeUpstream;
  let proc: ChildProcess;
  let uiUrl: string;
  let adminUrl: string;
  let token: string;
  let gatewayUrl: string;
  let dataDir: string;
  let browser: Browser;

  beforeAll(async () => {
    upstream = await startFakeUpstream(() => ({
      kind: 'json',
      body: anthropicMessage([{ type: 'text', text: 'Looked at it.' }], {
        input_tokens: 1200,
        cache_read_input_tokens: 9000,
        cache_creation_input_tokens: 800,
        output_tokens: 40,
      }),
    }));
    dataDir = mkdtempSync(path.join(tmpdir(), 'cg-ui-'));
    const [port, adminPort] = [await freePort(), await freePort()];
    gatewayUrl = `http://127.0.0.1:${port}`;
    const started = await startEmbeddedProcess({
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      DATA_DIR: dataDir,
      PRESET: 'agent',
      ANTHROPIC_UPSTREAM: upstream.url,
      LOG_LEVEL: 'warn',
    });
    proc = started.proc;
    uiUrl = started.uiUrl;
    adminUrl = new URL(uiUrl).origin;
    token = decodeURIComponent(/#token=(.+)$/.exec(uiUrl)![1]!);
    const steps = agentSteps(TURNS, 11);
    for (let turn = 1; turn <= TURNS; turn++) {
      const res = await fetch(`${gatewayUrl}/anthropic/v1/messages`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': 'sk-test',
          'anthropic-version': '2023-06-01',
          'x-context-guru-session': SESSION,
        },
        body: JSON.stringify(anthropicTurn(steps, turn, { model: 'claude-sonnet-4-5' })),
      });
      expect(res.status).toBe(200);
      await res.text();
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    mkdirSync(OUT, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    if (proc && proc.exitCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
    await upstream?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const api = async (url: string, auth = true) => {
    const res = await fetch(url, { headers: auth ? { authorization: `Bearer ${token}` } : {} });
    expect(res.status).toBe(200);
    return (await res.json()) as any;
  };

  it('shows the session, its savings and health as /stats and the admin API report them', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(uiUrl);
    await drawn(page);
    await page.selectOption('[data-testid="tenant-select"]', 'default');
    // The figures the page drew came from the admin API; the gateway's own /stats says the same.
    const stats = await api(`${gatewayUrl}/stats`, false);
    const admin = await api(`${adminUrl}/v1/stats`);
    const fromAdmin = admin.tenants.find((t: any) => t.id === 'default').stats;
    for (const k of ['requests', 'tokens_before', 'tokens_after', 'fail_open', 'expand_rounds', 'stash_misses', 'cache_read_tokens']) {
      expect([k, fromAdmin[k]]).toEqual([k, stats[k]]);
    }
    expect(stats.requests).toBe(TURNS);
    expect(stats.tokens_before).toBeGreaterThan(stats.tokens_after);
    expect(await text(page, 'requests')).toBe(int(stats.requests));
    expect(await text(page, 'tokens-before')).toBe(`${int(stats.tokens_before)} tokens`);
    expect(await text(page, 'tokens-after')).toBe(`${int(stats.tokens_after)} tokens`);
    expect(await text(page, 'saved-tokens')).toContain(`${int(stats.tokens_before - stats.tokens_after)} tokens`);
    expect(await text(page, 'fail-open')).toBe(int(stats.fail_open));
    expect(await text(page, 'expand-rounds')).toBe(int(stats.expand_rounds));
    expect(await text(page, 'stash-misses')).toBe(int(stats.stash_misses));
    const read = stats.cache_read_tokens;
    const all = read + stats.cache_write_tokens + stats.fresh_input_tokens;
    expect(await text(page, 'cache-share')).toMatch(new RegExp(`^${((read / all) * 100).toFixed(1)} % / `));
    // Money as the gateway priced the provider-reported usage (observability's money block).
    const usd = (n: number) => `$${n.toFixed(n >= 100 ? 2 : 4)}`;
    expect(stats.money.bill_with_usd).toBeGreaterThan(0);
    expect(stats.money.bill_without_usd).toBeGreaterThan(stats.money.bill_with_usd);
    expect(await text(page, 'billed-cost')).toBe(usd(stats.money.bill_with_usd));
    expect(await text(page, 'cost-without')).toBe(usd(stats.money.bill_without_usd));
    expect(await text(page, 'planned-rewrites')).toBe(
      `${int(stats.planned_rewrites)} (${usd(stats.planned_rewrite_cost_usd)} → ${usd(stats.planned_rewrite_saving_per_turn_usd)})`,
    );
    // The session row: its id, its turns, and what it sent against what the provider received.
    const row = page.locator('[data-testid="sessions"] tbody tr', { hasText: SESSION });
    await expect(row.count()).resolves.toBe(1);
    const sess = admin.sessions.find((s: any) => s.session === SESSION);
    expect(sess.turns).toBe(TURNS);
    expect(await row.textContent()).toContain(`${int(sess.tokens_before)} → ${int(sess.tokens_after)}`);
    // One row per component that ran, with the runs /stats counted.
    const ran = Object.entries(stats.components as Record<string, { runs: number }>).filter(([, c]) => c.runs > 0);
    await expect(page.locator('[data-testid="components"] tbody tr').count()).resolves.toBe(ran.length);
    // The token left the address bar once read.
    expect(page.url()).not.toContain('token=');
    await page.screenshot({ path: path.join(OUT, 'savings-page.png'), fullPage: true });
    if (process.env.CG_UPDATE_SCREENSHOTS === '1')
      copyFileSync(path.join(OUT, 'savings-page.png'), path.join(ROOT, 'docs', 'images', 'ui-savings.png'));
    await page.close();
  });

  it('keeps every box where it was across a refresh and fits a narrow window', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(uiUrl);
    await drawn(page);
    const boxes = () => page.$$eval('.cards > div, #chart', (els) => els.map((e) => JSON.stringify(e.getBoundingClientRect())));
    const before = await boxes();
    const stamp = await page.locator('#updated').textContent();
    await page
      .locator('#updated')
      .filter({ hasNotText: stamp ?? '' })
      .waitFor({ timeout: 20_000 });
    expect(await boxes()).toEqual(before);
    await page.setViewportSize({ width: 420, height: 800 });
    // The chart follows the window on its resize event: wait until it has (bounded).
    for (let i = 0; i < 50 && ((await page.locator('#chart .uplot').boundingBox())?.width ?? 0) > 420; i++) await page.waitForTimeout(100);
    expect((await page.locator('#chart .uplot').boundingBox())!.width).toBeLessThanOrEqual(420);
    const overflow = await page.evaluate(() => {
      const g = globalThis as unknown as PageGlobals;
      return g.document.documentElement.scrollWidth - g.innerWidth;
    });
    expect(overflow).toBeLessThanOrEqual(0);
    await page.close();
  });

  it('refuses a wrong token with a clear message and shows no data', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${adminUrl}/ui/#token=not-the-token`);
    const problem = page.locator('[data-testid="problem"]');
    await problem.waitFor({ state: 'visible' });
    expect(await problem.textContent()).toMatch(/refused this token \(401 unauthorized\)/);
    expect(await page.locator('#data').isVisible()).toBe(false);
    expect(await text(page, 'requests')).toBe('–');
    await page.close();
  });
});
