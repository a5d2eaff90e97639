// Fires N requests at once (one connection each) and prints their latencies: the overload load.
// argv: url bodyFile count [headers-json] [session-prefix]; request i carries
// x-context-guru-session: <prefix>-<i> (prefix "burst"), so every request is a new session.
// Failures are counted by what they were (an HTTP status, or the socket error's code), so a run
// can tell a refused or timed-out connection (listen backlog, a starved accept loop; undici's default
// 10 s connect timeout, as a real client has) from an answer the proxy gave.
const { Agent, request } = require('undici');
const { readFileSync } = require('node:fs');

const [url, bodyFile, countArg, headersJson, prefix = 'burst'] = process.argv.slice(2);
const body = readFileSync(bodyFile);
const count = Number(countArg);
const extra = headersJson ? JSON.parse(headersJson) : {};
const dispatcher = new Agent({ connections: count, headersTimeout: 300_000, bodyTimeout: 300_000 });
const reasons = {};

async function one(i) {
  const t0 = performance.now();
  try {
    const r = await request(url, {
      method: 'POST',
      body,
      dispatcher,
      headers: { 'content-type': 'application/json', 'x-context-guru-session': `${prefix}-${i}`, ...extra },
    });
    await r.body.text();
    if (r.statusCode !== 200) reasons[`http ${r.statusCode}`] = (reasons[`http ${r.statusCode}`] ?? 0) + 1;
    return { ms: performance.now() - t0, ok: r.statusCode === 200 };
  } catch (err) {
    const code = err.code ?? err.cause?.code ?? err.name;
    reasons[code] = (reasons[code] ?? 0) + 1;
    return { ms: performance.now() - t0, ok: false };
  }
}

const t0 = performance.now();
Promise.all(Array.from({ length: count }, (_, i) => one(i))).then(async (rs) => {
  await dispatcher.close();
  const ms = rs.filter((r) => r.ok).map((r) => r.ms);
  process.stdout.write(JSON.stringify({ wallMs: performance.now() - t0, ms, failed: rs.filter((r) => !r.ok).length, reasons }));
});
