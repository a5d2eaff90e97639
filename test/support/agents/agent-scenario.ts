// One agent run of the coding task, directly against the scripted provider or through the real
// gateway (in-process, the default preset unless told otherwise) with a recording tap in front of it.
// Everything the assertions need is kept: the CLI's transcript, the client's own request bodies,
// every body the provider received, the egress trap's log, and the gateway for GET /expand.
import { rmSync } from 'node:fs';
import { startGateway, type GatewayHarness } from '../gateway-harness';
import type { RecordedRequest } from '../fake-upstream';
import { runAgent, scratchRun, type AgentKind, type AgentRun } from './agent-cli';
import { startAgentProvider, type AgentProvider } from './agent-provider';
import { CLAUDE_TOOLS, CODEX_TOOLS, QWEN_TOOLS, type AgentTools } from './coding-script';
import { startEgressTrap } from './egress-trap';
import { startRecordingTap } from './recording-tap';

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
  close(): Promise<void>;
}

export interface ScenarioOptions {
  kind: AgentKind;
  via: 'direct' | 'gateway';
  gatewayEnv?: Record<string, string>;
  expandBeside?: boolean;
}

const dialectPath = (kind: AgentKind) => (kind === 'claude' ? '/anthropic' : '/openai/v1');

export async function runScenario(o: ScenarioOptions): Promise<Scenario> {
  const tools = o.kind === 'claude' ? CLAUDE_TOOLS : o.kind === 'qwen' ? QWEN_TOOLS : CODEX_TOOLS;
  const scratch = scratchRun();
  const trap = await startEgressTrap();
  const provider = await startAgentProvider({ tools, workdir: scratch.workdir, expandBeside: o.expandBeside }, TASK_HEAD);
  const gateway = o.via === 'gateway' ? await startGateway(provider.url, { ...o.gatewayEnv }) : undefined;
  const tap = gateway ? await startRecordingTap(gateway.url) : undefined;
  const baseUrl = tap ? `${tap.url}${dialectPath(o.kind)}` : o.kind === 'claude' ? provider.url : `${provider.url}/v1`;
  const session = `e2e-${o.kind}-${o.via}${o.expandBeside ? '-beside' : ''}`;
  const run = await runAgent({ kind: o.kind, baseUrl, prompt: TASK, session, egressProxy: trap.url, scratch });
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
    async close() {
      await gateway?.close();
      await provider.close();
      rmSync(scratch.root, { recursive: true, force: true });
    },
  };
}
