// Real Gemini CLI (@google/gemini-cli, pinned; headless `-p … -o stream-json`, generateContent over
// SSE) on a scripted three-command task, straight against a scripted fake Gemini provider and
// through the gateway (preset agent), under `env -i`, a scratch HOME and an egress trap. The
// scripted model reads back the first command's output at the end (through the gateway it is a
// marker by then, which the model redeems in-band): same commands and verdict either way, the CLI
// never sees a context_guru_expand call, thought signatures reach the provider byte-identical,
// every forwarded body passes the Gemini shape validator and no client turn changes a byte of
// what the turn before it forwarded.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';
import { startEgressTrap, type EgressTrap } from '../../support/agents/egress-trap';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedReply } from '../../support/fake-upstream';
import { startGateway, type GatewayHarness } from '../../support/gateway-harness';
import { geminiJson, geminiSse } from '../../support/gemini-fixtures';
import { metricSum, scrape } from '../../support/metrics-text';

jest.setTimeout(300_000);

const CLI = join(__dirname, '..', '..', '..', 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js');
const MODEL = 'gemini-2.5-pro';
const COMMANDS = ['seq 1 2000', 'seq 2001 4000', 'echo done'];
const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/;
const sig = (k: number): string => `U0lHLXN0ZXAt${k}LWdlbWluaQ==`;

type Part = {
  text?: string;
  thoughtSignature?: string;
  functionCall?: { name: string; args?: { id?: string } };
  functionResponse?: { name: string; response: { output?: string } };
};
const partsOf = (r: RecordedRequest): Part[] => ((r.body.contents ?? []) as Array<{ parts: Part[] }>).flatMap((c) => c.parts);
const isMain = (r: RecordedRequest): boolean => r.path.includes(':streamGenerateContent') && r.raw.includes('"run_shell_command"');
const responses = (r: RecordedRequest, name: string): string[] =>
  partsOf(r).flatMap((p) => (p.functionResponse?.name === name ? [p.functionResponse.response.output ?? ''] : []));

/** The number lines of an output, the verdict's figure (the CLI wraps it: `Output: 1`…, a varying PGID). */
const numberLines = (text: string): number => text.split('\n').filter((l) => /^(?:Output: )?\d+$/.test(l.trim())).length;

/** The scripted model: one command per step, then (after redeeming a marker if it sees one) the verdict. */
function script(req: RecordedRequest): ScriptedReply {
  if (!isMain(req)) return { kind: 'json', body: geminiJson([{ text: '{"reasoning":"done","next_speaker":"user"}' }]) };
  const ran = responses(req, 'run_shell_command');
  const expanded = responses(req, 'context_guru_expand');
  let parts: Part[];
  if (ran.length < COMMANDS.length) {
    const k = ran.length;
    parts = [
      { text: `Step ${k}: running ${COMMANDS[k]}.`, thoughtSignature: sig(k) },
      { functionCall: { name: 'run_shell_command', args: { command: COMMANDS[k], description: `step ${k}` } } as Part['functionCall'] },
    ];
  } else {
    const marker = MARKER.exec(ran[0] ?? '')?.[1];
    if (marker && expanded.length === 0) parts = [{ functionCall: { name: 'context_guru_expand', args: { id: marker } } }];
    else parts = [{ text: `VERDICT: ${ran.length} commands ran; the first printed ${numberLines(expanded[0] ?? ran[0] ?? '')} numbers.` }];
  }
  return { kind: 'sse', events: [geminiSse(parts)] };
}

interface Run {
  code: number | null;
  events: Array<Record<string, unknown>>;
  stdout: string;
}

async function runCli(baseUrl: string, trap: EgressTrap, session: string): Promise<Run> {
  const root = mkdtempSync(join(tmpdir(), 'cg-gemini-'));
  for (const d of ['home/.gemini', 'tmp', 'repo']) mkdirSync(join(root, d), { recursive: true });
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
  };
  writeFileSync(join(root, 'home', '.gemini', 'settings.json'), JSON.stringify(settings));
  const env = {
    PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
    HOME: join(root, 'home'),
    TMPDIR: join(root, 'tmp'),
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    HTTP_PROXY: trap.url,
    HTTPS_PROXY: trap.url,
    http_proxy: trap.url,
    https_proxy: trap.url,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    GOOGLE_GEMINI_BASE_URL: baseUrl,
    GEMINI_API_KEY: 'AIza-e2e-dummy',
    GEMINI_CLI_NO_RELAUNCH: 'true',
    GEMINI_CLI_CUSTOM_HEADERS: `x-context-guru-session:${session}`,
  };
  const argv = [process.execPath, CLI, '-p', 'Run the three steps, then give the verdict.', '--yolo', '-o', 'stream-json', '-m', MODEL];
  const assignments = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  const child = spawn('/usr/bin/env', ['-i', ...assignments, ...argv], { cwd: join(root, 'repo'), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.resume();
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  const events = stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code, events, stdout };
}

const commandsOf = (run: Run): unknown[] =>
  run.events.filter((e) => e.type === 'tool_use').map((e) => (e.parameters as { command?: string }).command);
const verdictOf = (run: Run): string =>
  run.events
    .filter((e) => e.type === 'message' && e.role === 'assistant')
    .map((e) => String(e.content))
    .join('')
    .replace(/^[\s\S]*(VERDICT:)/, '$1');

let trap: EgressTrap;
let direct: FakeUpstream;
let proxied: FakeUpstream;
let gateway: GatewayHarness;
let directRun: Run;
let gatewayRun: Run;

beforeAll(async () => {
  trap = await startEgressTrap();
  direct = await startFakeUpstream(script);
  proxied = await startFakeUpstream(script);
  gateway = await startGateway(proxied.url, { PRESET: 'agent' });
  directRun = await runCli(direct.url, trap, 'gemini-direct');
  gatewayRun = await runCli(`${gateway.url}/gemini`, trap, 'gemini-via-gateway');
});
afterAll(async () => {
  await gateway?.close();
  await proxied?.close();
  await direct?.close();
  await trap?.close();
});

describe('Gemini CLI', () => {
  it('runs the task directly: three commands, the verdict, nothing leaves loopback', () => {
    expect(directRun.code).toBe(0);
    expect(commandsOf(directRun)).toEqual(COMMANDS);
    expect(verdictOf(directRun)).toBe('VERDICT: 3 commands ran; the first printed 2000 numbers.');
    expect(trap.attempts).toEqual([]);
  });

  it('runs it through the gateway exactly so, the marker redeemed where the CLI cannot see it', () => {
    expect(gatewayRun.code).toBe(0);
    expect(commandsOf(gatewayRun)).toEqual(commandsOf(directRun));
    expect(verdictOf(gatewayRun)).toBe(verdictOf(directRun));
    expect(gatewayRun.stdout).not.toContain('context_guru_expand');
    const continuations = proxied.requests.filter((r) => responses(r, 'context_guru_expand').length > 0);
    expect(continuations).toHaveLength(1);
  });

  it('forwards valid bodies, signatures byte-identical, no client turn changing what the last one sent', async () => {
    const main = proxied.requests.filter(isMain);
    for (const r of proxied.requests) expect(validateProviderShape('gemini', r.body)).toEqual([]);
    main.forEach((r, i) => {
      for (let k = 0; k < Math.min(i, COMMANDS.length); k++) expect(r.raw).toContain(JSON.stringify(sig(k)));
    });
    const turns = main.filter((r) => responses(r, 'context_guru_expand').length === 0);
    const contents = (r: RecordedRequest): string[] => (r.body.contents as unknown[]).map((c) => JSON.stringify(c));
    for (let t = 1; t < turns.length; t++) {
      const prev = contents(turns[t - 1]!);
      expect(contents(turns[t]!).slice(0, prev.length)).toEqual(prev);
      expect(JSON.stringify(turns[t]!.body.tools)).toBe(JSON.stringify(turns[t - 1]!.body.tools));
    }
    expect(turns.at(-1)!.raw).toMatch(MARKER);
    const samples = await scrape(gateway.url);
    expect(metricSum(samples, 'cg_saved_tokens_total', { dialect: 'gemini' })).toBeGreaterThan(0);
    expect(trap.attempts).toEqual([]);
  });
});
