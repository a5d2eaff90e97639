// The provider stand-in for the load benchmarks, in its own process: every answer is the same
// pre-serialised bytes and the request body is drained unread, so a request costs it less than
// it costs any proxy in front of it (the bench also measures it directly to show that).
// Prints its port on stdout. Optional argv[2]: a delay in ms before answering (overload bench).
const { createServer } = require('node:http');

const delayMs = Number(process.argv[2] ?? 0);
const ANSWER = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4.1',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Done: the parser tests pass now.' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 15000, completion_tokens: 9, total_tokens: 15009 },
  }),
);
// An Anthropic request (/v1/messages) gets an Anthropic answer, so gateways parse what they expect.
const ANTHROPIC = Buffer.from(
  JSON.stringify({
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    model: 'claude-fake',
    content: [{ type: 'text', text: 'Done: the parser tests pass now.' }],
    stop_reason: 'end_turn',
    usage: { input_tokens: 15000, output_tokens: 9 },
  }),
);
const headersOf = (body) => ['content-type', 'application/json', 'content-length', String(body.length)];
const HEADERS = headersOf(ANSWER);
const ANTHROPIC_HEADERS = headersOf(ANTHROPIC);

function answer(res, anthropic) {
  res.writeHead(200, anthropic ? ANTHROPIC_HEADERS : HEADERS);
  res.end(anthropic ? ANTHROPIC : ANSWER);
}

const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  const anthropic = req.url.endsWith('/messages');
  req.on('end', delayMs > 0 ? () => setTimeout(answer, delayMs, res, anthropic) : () => answer(res, anthropic));
  req.resume();
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
