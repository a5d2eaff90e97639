// Real Codex CLI (@openai/codex, pinned; `codex exec --json`, the Responses API) through the
// gateway and without it, on the scripted coding task. See test/support/agents/agent-suite.ts for
// what is asserted.
import { defineAgentSuite } from '../../support/agents/agent-suite';

describe('Codex CLI', () => defineAgentSuite('codex'));
