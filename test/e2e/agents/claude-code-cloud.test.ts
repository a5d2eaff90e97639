// Real Claude Code (@anthropic-ai/claude-code, pinned) on Amazon Bedrock and Google Vertex AI
// (CLAUDE_CODE_USE_BEDROCK / _VERTEX, their own auth skipped), through the gateway and without it,
// on the scripted coding task: the gateway signs for a fake Bedrock that verifies SigV4 with a
// known test key and streams the binary event stream, and presents a token a fake token endpoint
// issued to a fake Vertex. See test/support/agents/agent-suite.ts for what is asserted.
import { defineAgentSuite } from '../../support/agents/agent-suite';

describe('Claude Code CLI on Bedrock', () => defineAgentSuite('claude', { beside: false, cloud: 'bedrock' }));
describe('Claude Code CLI on Vertex AI', () => defineAgentSuite('claude', { beside: false, cloud: 'vertex' }));
