// Hostile but valid request bodies: 64-bit integers, escaped unicode, unknown fields, odd
// whitespace and key order — everything a re-serializing proxy would silently alter.
import type { Message } from '@context-guru/components';

export const PYTEST_FAIL = [
  '============================= test session starts ==============================',
  'platform linux -- Python 3.11.6, pytest-8.1.1, pluggy-1.4.0',
  'rootdir: /home/dev/shop',
  'collected 14 items',
  '',
  'tests/test_cart.py ..F.....                                              [ 57%]',
  'tests/test_checkout.py ......                                            [100%]',
  '',
  '=================================== FAILURES ===================================',
  '____________________________ test_discount_applied _____________________________',
  '',
  '    def test_discount_applied():',
  '        cart = Cart([Item("book", 1200)])',
  '>       assert cart.total(code="SPRING") == 1080',
  'E       AssertionError: assert 1200 == 1080',
  '',
  'tests/test_cart.py:41: AssertionError',
  '=========================== short test summary info ============================',
  'FAILED tests/test_cart.py::test_discount_applied - AssertionError: assert 1200 == 1080',
  '========================= 1 failed, 13 passed in 0.31s =========================',
].join('\n');

export const OPENAI_HOSTILE = String.raw`{
  "model" :"gpt-4o",   "seed": 12345678901234567890,
  "x_vendor": {"nested": [[1, 2, [3, {"a": "\u00e9\ud83d\ude00"}]], -0.0e+10, true, null], "big": 1e400},
	"messages": [
    {"role": "developer", "content": "You are a careful \u0063oding agent."},
    {"content": "run the tests in ./shop", "role": "user", "x_meta": {"k": 18446744073709551615}},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\":\"pytest -q\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": ${JSON.stringify(PYTEST_FAIL)}},
    {"role":"user","content":[{"type":"text","text":"and this screenshot"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]},
    {"role":"assistant" , "content" : "Looking at \u2028 the \"failure\" now\/"}
  ],
  "tools": [{"type":"function","function":{"name":"bash","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}}],
  "stream":true ,"stream_options":{"include_usage":true}
}
`;

export const ANTHROPIC_HOSTILE = String.raw`{"model":"claude-sonnet-4-5","max_tokens":8192,
 "system":[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}},{"type":"text","text":"gitStatus: clean"}],
 "metadata":{"user_id":"{\"device_id\":\"d1\",\"account_uuid\":\"a1\",\"session_id\":\"7d1c2f0e-5b7a-4c1e-9c3d-2f6a8b9e0c11\"}"},
 "thinking" : {"type":"enabled","budget_tokens":4096}, "x_trace": 9007199254740993,
 "messages":[
  {"role":"user","content":[{"type":"text","text":"fix the failing test"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgoAAAANSUhEUg=="}}]},
  {"role":"assistant","content":[{"type":"thinking","thinking":"Run pytest first.","signature":"EqQBCkYIARgCIkB\u002b/sig=="},{"type":"text","text":"Running the tests."},{"type":"tool_use","id":"toolu_01","name":"Bash","input":{"command":"pytest -q","timeout":120000}},{"type":"tool_use","id":"toolu_02","name":"Read","input":{"file_path":"/home/dev/shop/cart.py"}}]},
  {"role":"user","content":[
     {"type":"tool_result","tool_use_id":"toolu_01","content":${JSON.stringify(PYTEST_FAIL)},"is_error":true},
     {"type":"tool_result","tool_use_id":"toolu_02","content":[{"type":"text","text":"class Cart:\n    def total(self, code=None):\n        return sum(i.price for i in self.items)\n"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},{"type":"text","text":"(file truncated \u2026)"}]},
     {"type":"text","text":"note: use Python 3.11"}
  ]},
  {"role":"assistant","content":"I will patch cart.py."}
 ],
 "tools":[{"name":"Bash","description":"Run a shell command","input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}},
          {"name":"Read","description":"Read a file","input_schema":{"type":"object","properties":{"file_path":{"type":"string"}}},"cache_control":{"type":"ephemeral"}}],
 "stream": true}`;

/** A deep copy of `messages` with message i's content replaced. */
export function withContent(messages: readonly Message[], i: number, content: Message['content']): Message[] {
  const out = messages.map((m) => structuredClone(m));
  out[i]!.content = content;
  return out;
}
