// Fires N requests at once (one connection each) and prints their latencies: the overload load.
// argv: url bodyFile count [headers-json]; each request gets x-context-guru-session: burst-<i>.
const { Agent, request } = require('undici');
const { readFileSync } = require('node:fs');

const [url, bodyFile, countArg, headersJson] = process.argv.slice(2);
const body = readFileSync(bodyFile);
const count = Number(countArg);
const extra = headersJson ? JSON.parse(headersJson) : {};
const dispatcher = new Agent({ connections: count, headersTimeout: 300_000, bodyTimeout: 300_000 });

async function one(i) {
  const t0 = performance.now();
  const r = await request(url, {
    method: 'POST',
    body,
    dispatcher,
    headers: { 'content-type': 'application/json', 'x-context-guru-session': `burst-${i}`, ...extra },
  });
  await r.body.text();
  return { ms: performance.now() - t0, ok: r.statusCode === 200 };
}

const t0 = performance.now();
Promise.all(Array.from({ length: count }, (_, i) => one(i).catch(() => ({ ms: performance.now() - t0, ok: false })))).then(async (rs) => {
  await dispatcher.close();
  process.stdout.write(JSON.stringify({ wallMs: performance.now() - t0, ms: rs.map((r) => r.ms), failed: rs.filter((r) => !r.ok).length }));
});
