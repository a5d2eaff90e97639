// Real Claude Code (@anthropic-ai/claude-code, pinned) through the gateway and without it, on the
// scripted coding task. See test/support/agents/agent-suite.ts for what is asserted.
import { defineAgentSuite } from '../../support/agents/agent-suite';

describe('Claude Code CLI', () => defineAgentSuite('claude'));
