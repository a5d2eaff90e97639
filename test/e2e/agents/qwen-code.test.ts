// Real Qwen Code (@qwen-code/qwen-code, pinned) through the gateway and without it, on the
// scripted coding task. See test/support/agents/agent-suite.ts for what is asserted.
import { defineAgentSuite } from '../../support/agents/agent-suite';

describe('Qwen Code CLI', () => defineAgentSuite('qwen'));
