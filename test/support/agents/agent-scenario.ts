// One agent run of the coding task, directly against the scripted provider or through the real
// gateway (in-process, the default preset unless told otherwise) with a recording tap in front of it.
// Everything the assertions need is kept: the CLI's transcript, the client's own request bodies,
// every body the provider received, the egress trap's log, and the gateway for GET /expand.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cloudScript, startFakeTokenEndpoint, TEST_KEY, TEST_REGION, type CloudWatch, type FakeTokenEndpoint } from '../fake-cloud';
import { startGateway, type GatewayHarness } from '../gateway-harness';
import type { RecordedRequest, Script } from '../fake-upstream';
import { runAgent, scratchRun, type AgentKind, type AgentRun, type Cloud } from './agent-cli';
import { startAgentProvider, type AgentProvider } from './agent-provider';
import { CLAUDE_TOOLS, CODEX_TOOLS, QWEN_TOOLS, type AgentTools } from './coding-script';
import { startEgressTrap } from './egress-trap';
import { startRecordingTap } from './recording-tap';
import { PromptCacheSim } from '../prompt-cache';

export const TASK_HEAD = 'The test suite of this project fails';
const TASK = `${TASK_HEAD} (run it with \`node test/run.js\`). Find the bug in src/stats.js, fix it, re-run the tests, and end with one line starting with VERDICT:.`;

export interface Scenario {
  kind: AgentKind;
  tools: AgentTools;
  session: string;
  run: AgentRun;
  provider: AgentProvider;
  /** What the CLI itself sent (the tap's log; the provider's log on a direct run). */
  client: RecordedRequest[];
  egress: string[];
  gateway?: GatewayHarness;
  /** On a cloud run: requests the fake cloud refused (a signature or token that did not verify). */
  cloudProblems: string[];
  close(): Promise<void>;
}

export interface ScenarioOptions {
  kind: AgentKind;
  via: 'direct' | 'gateway';
  gatewayEnv?: Record<string, string>;
  expandBeside?: boolean;
  /** Claude Code on Bedrock or Vertex: the provider sits behind a fake of that cloud. */
  cloud?: Cloud;
}

const dialectPath = (kind: AgentKind, cloud?: Cloud) =>
  cloud === 'bedrock' ? '/bedrock' : cloud === 'vertex' ? '/vertex/v1' : kind === 'claude' ? '/anthropic' : '/openai/v1';

/** The gateway's own credentials for the fake cloud: the test key for SigV4, a service-account key for Vertex. */
function cloudGatewayEnv(cloud: Cloud, upstream: string, tokens: FakeTokenEndpoint | undefined, dir: string): Record<string, string> {
  if (cloud === 'bedrock')
    return {
      BEDROCK_UPSTREAM: upstream,
      AWS_REGION: TEST_REGION,
      AWS_ACCESS_KEY_ID: TEST_KEY.id,
      AWS_SECRET_ACCESS_KEY: TEST_KEY.secret,
      AWS_SESSION_TOKEN: TEST_KEY.token,
    };
  const keyFile = join(dir, 'vertex-key.json');
  writeFileSync(keyFile, tokens?.keyFile ?? '{}');
  return { VERTEX_UPSTREAM: upstream, GOOGLE_APPLICATION_CREDENTIALS: keyFile };
}

export async function runScenario(o: ScenarioOptions): Promise<Scenario> {
  const tools = o.kind === 'claude' ? CLAUDE_TOOLS : o.kind === 'qwen' ? QWEN_TOOLS : CODEX_TOOLS;
  const scratch = scratchRun();
  const trap = await startEgressTrap();
  const cloud = o.cloud;
  const tokens = cloud === 'vertex' && o.via === 'gateway' ? await startFakeTokenEndpoint() : undefined;
  const watch: CloudWatch = { problems: [], sent: [], vertexToken: () => tokens?.issued(), requireAuth: o.via === 'gateway' };
  const front = cloud ? (s: Script) => cloudScript(s, watch) : undefined;
  // The cloud bills like Anthropic's API: a prompt cache keyed by the (stable) credential.
  const sim = cloud ? new PromptCacheSim() : undefined;
  const provider = await startAgentProvider({ tools, workdir: scratch.workdir, expandBeside: o.expandBeside }, TASK_HEAD, front, sim);
  const env = { ...(cloud ? cloudGatewayEnv(cloud, provider.url, tokens, scratch.root) : {}), ...o.gatewayEnv };
  const gateway = o.via === 'gateway' ? await startGateway(provider.url, env) : undefined;
  const tap = gateway ? await startRecordingTap(gateway.url) : undefined;
  const direct =
    cloud === 'vertex' ? `${provider.url}/v1` : cloud === 'bedrock' || o.kind === 'claude' ? provider.url : `${provider.url}/v1`;
  const baseUrl = tap ? `${tap.url}${dialectPath(o.kind, cloud)}` : direct;
  const session = `e2e-${o.kind}-${o.via}${o.expandBeside ? '-beside' : ''}${cloud ? `-${cloud}` : ''}`;
  const run = await runAgent({ kind: o.kind, baseUrl, prompt: TASK, session, egressProxy: trap.url, scratch, cloud });
  await tap?.close();
  await trap.close();
  return {
    kind: o.kind,
    tools,
    session,
    run,
    provider,
    client: tap ? tap.requests : provider.requests,
    egress: trap.attempts,
    gateway,
    cloudProblems: watch.problems,
    async close() {
      await gateway?.close();
      await tokens?.close();
      await provider.close();
      rmSync(scratch.root, { recursive: true, force: true });
    },
  };
}
