// The reference every throughput figure is a ratio of: a bare node:http + undici pass-through
// (no parsing, same keep-alive pool settings as the gateway's upstream client), in its own
// process. Prints its port on stdout. argv[2]: the upstream origin.
const { createServer } = require('node:http');
const { Agent, request } = require('undici');

const target = `${process.argv[2]}/v1/chat/completions`;
const dispatcher = new Agent({ connections: 128, keepAliveTimeout: 30_000 });

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    request(target, { method: 'POST', body: Buffer.concat(chunks), headers: { 'content-type': 'application/json' }, dispatcher }).then(
      (r) => {
        res.writeHead(r.statusCode, { 'content-type': String(r.headers['content-type'] ?? 'application/json') });
        r.body.pipe(res);
        r.body.once('error', () => res.destroy());
        res.once('close', () => r.body.destroy());
      },
      () => res.writeHead(502).end(),
    );
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
