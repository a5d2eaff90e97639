// Runs a real agent CLI headless under `env -i`: a minimal PATH, a scratch HOME (and Claude Code's
// CONFIG_DIR, TMPDIR) per run, base URLs on loopback only, every telemetry / update / error-report
// switch off, and HTTP(S)_PROXY aimed at the egress trap so nothing can reach another host.
// Both CLIs print their transcript as stream-json (one JSON event per line) for the assertions.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readSync, closeSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { writeScratchRepo } from './scratch-repo';
import { FAKE_MODEL } from './agent-provider';

const ROOT = join(__dirname, '..', '..', '..');
const RUN_TIMEOUT_MS = 90_000;

export type AgentKind = 'claude' | 'qwen' | 'codex';

export interface AgentRunOptions {
  kind: AgentKind;
  /** Where the CLI sends model calls: the fake provider's URL, or the gateway's dialect prefix. */
  baseUrl: string;
  prompt: string;
  /** x-context-guru-session sent on every model call. */
  session: string;
  egressProxy: string;
  /** From scratchRun(); the provider's script needs the workdir before the run starts. */
  scratch: Scratch;
  /** Claude Code on Amazon Bedrock or Google Vertex AI (`baseUrl` is then that cloud's base URL). */
  cloud?: Cloud;
}

export type Cloud = 'bedrock' | 'vertex';

/** Claude Code's switches for a cloud, its own credentials skipped (the gateway signs; the fake checks). */
function cloudEnv(cloud: Cloud, baseUrl: string): Record<string, string> {
  if (cloud === 'bedrock')
    return {
      CLAUDE_CODE_USE_BEDROCK: '1',
      ANTHROPIC_BEDROCK_BASE_URL: baseUrl,
      CLAUDE_CODE_SKIP_BEDROCK_AUTH: '1',
      AWS_REGION: 'us-west-2',
    };
  return {
    CLAUDE_CODE_USE_VERTEX: '1',
    ANTHROPIC_VERTEX_BASE_URL: baseUrl,
    CLAUDE_CODE_SKIP_VERTEX_AUTH: '1',
    ANTHROPIC_VERTEX_PROJECT_ID: 'cg-proj',
    CLOUD_ML_REGION: 'us-east5',
  };
}

export interface Scratch {
  root: string;
  workdir: string;
}

export interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The parsed stream-json events. */
  events: Record<string, unknown>[];
  /** The scratch repo the agent worked in. */
  workdir: string;
}

function isElf(path: string): boolean {
  try {
    const fd = openSync(path, 'r');
    const head = Buffer.alloc(4);
    readSync(fd, head, 0, 4, 0);
    closeSync(fd);
    return head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } catch {
    return false;
  }
}

/** npm blocks the package's postinstall, which would put the native binary at bin/claude.exe. */
function claudeBinary(): string {
  const wrapper = join(ROOT, 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe');
  return isElf(wrapper) ? wrapper : join(ROOT, 'node_modules', '@anthropic-ai', 'claude-code-linux-x64', 'claude');
}

const QWEN_ENTRY = join(ROOT, 'node_modules', '@qwen-code', 'qwen-code', 'cli-entry.js');
/** The launcher execs the native binary from the optional dependency @openai/codex-linux-x64. */
const CODEX_ENTRY = join(ROOT, 'node_modules', '@openai', 'codex', 'bin', 'codex.js');

/** A scratch root with the repo and the CLI's private dirs; the repo is the working directory. */
export function scratchRun(): Scratch {
  const root = mkdtempSync(join(tmpdir(), 'cg-agent-'));
  const workdir = join(root, 'repo');
  writeScratchRepo(workdir);
  for (const d of ['home', 'config', 'tmp']) mkdirSync(join(root, d));
  return { root, workdir };
}

function commonEnv(root: string, o: AgentRunOptions): Record<string, string> {
  return {
    PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
    HOME: join(root, 'home'),
    TMPDIR: join(root, 'tmp'),
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    HTTP_PROXY: o.egressProxy,
    HTTPS_PROXY: o.egressProxy,
    http_proxy: o.egressProxy,
    https_proxy: o.egressProxy,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  };
}

function claudeCommand(root: string, o: AgentRunOptions): { env: Record<string, string>; argv: string[] } {
  const env = {
    ...commonEnv(root, o),
    CLAUDE_CONFIG_DIR: join(root, 'config'),
    ...(o.cloud ? cloudEnv(o.cloud, o.baseUrl) : { ANTHROPIC_BASE_URL: o.baseUrl, ANTHROPIC_API_KEY: 'sk-ant-e2e-dummy' }),
    ANTHROPIC_CUSTOM_HEADERS: `x-context-guru-session: ${o.session}`,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTO_COMPACT: '1',
    CLAUDE_CODE_MAX_RETRIES: '1',
    IS_SANDBOX: '1',
  };
  return {
    env,
    argv: [
      claudeBinary(),
      '-p',
      o.prompt,
      '--dangerously-skip-permissions',
      '--output-format',
      'stream-json',
      '--verbose',
      '--max-turns',
      '20',
    ],
  };
}

function qwenCommand(root: string, o: AgentRunOptions): { env: Record<string, string>; argv: string[] } {
  const settings = {
    general: { enableAutoUpdate: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false, enableAutoSkill: false },
    tools: { useRipgrep: false },
    model: { generationConfig: { customHeaders: { 'x-context-guru-session': o.session } } },
  };
  mkdirSync(join(root, 'home', '.qwen'));
  writeFileSync(join(root, 'home', '.qwen', 'settings.json'), JSON.stringify(settings, null, 2));
  const env = {
    ...commonEnv(root, o),
    OPENAI_BASE_URL: o.baseUrl,
    OPENAI_API_KEY: 'sk-e2e-dummy',
    OPENAI_MODEL: FAKE_MODEL,
    QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
    QWEN_TELEMETRY_ENABLED: '0',
    QWEN_USAGE_STATISTICS_ENABLED: '0',
    // Qwen Code re-executes itself once to raise the heap limit; a task this small does not need
    // it, and one Node start less is seconds on a loaded 2-core machine.
    QWEN_CODE_NO_RELAUNCH: 'true',
  };
  return {
    env,
    argv: [
      process.execPath,
      QWEN_ENTRY,
      '--yolo',
      '--auth-type',
      'openai',
      '-o',
      'stream-json',
      '--max-session-turns',
      '20',
      '-p',
      o.prompt,
    ],
  };
}

/** Codex reads its provider from $HOME/.codex/config.toml: the loopback base URL and the session header. */
function codexCommand(root: string, o: AgentRunOptions): { env: Record<string, string>; argv: string[] } {
  const config = [
    `model = ${JSON.stringify(FAKE_MODEL)}`,
    'model_provider = "cg"',
    'check_for_update_on_startup = false',
    '[analytics]',
    'enabled = false',
    // Plugins sync a curated catalog from GitHub and ChatGPT at startup (the egress trap saw them).
    '[features]',
    'plugins = false',
    '[model_providers.cg]',
    'name = "cg"',
    `base_url = ${JSON.stringify(o.baseUrl)}`,
    'wire_api = "responses"',
    'env_key = "OPENAI_API_KEY"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    `http_headers = { "x-context-guru-session" = ${JSON.stringify(o.session)} }`,
    '',
  ].join('\n');
  mkdirSync(join(root, 'home', '.codex'));
  writeFileSync(join(root, 'home', '.codex', 'config.toml'), config);
  const env = { ...commonEnv(root, o), OPENAI_API_KEY: 'sk-e2e-dummy', CODEX_HOME: join(root, 'home', '.codex') };
  return {
    env,
    argv: [
      process.execPath,
      CODEX_ENTRY,
      'exec',
      '--json',
      '--dangerously-bypass-approvals-and-sandbox',
      '--skip-git-repo-check',
      o.prompt,
    ],
  };
}

function command(root: string, o: AgentRunOptions): { env: Record<string, string>; argv: string[] } {
  if (o.kind === 'claude') return claudeCommand(root, o);
  return o.kind === 'qwen' ? qwenCommand(root, o) : codexCommand(root, o);
}

function parseEvents(stdout: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a partial line at a kill; the assertions see the rest
    }
  }
  return out;
}

/** Runs the CLI to completion (async: the gateway under test may live in this same process). */
export async function runAgent(o: AgentRunOptions): Promise<AgentRun> {
  const { root, workdir } = o.scratch;
  const { env, argv } = command(root, o);
  const assignments = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  const child = spawn('/usr/bin/env', ['-i', ...assignments, ...argv], { cwd: workdir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stdout, stderr, events: parseEvents(stdout), workdir };
}
