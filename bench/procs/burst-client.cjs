// Fires N requests at once (one connection each) and prints their latencies: the overload load.
// argv: url bodyFile count [headers-json] [session-prefix]; request i carries
// x-context-guru-session: <prefix>-<i> (prefix "burst"), so every request is a new session.
// Failures are counted by what they were (an HTTP status, or the socket error's code), so a run
// can tell a refused or timed-out connection (and, from when they failed, which timeout it was) (listen backlog, a starved accept loop; undici's default
// 10 s connect timeout, as a real client has) from an answer the proxy gave.
const { Agent, request } = require('undici');
const { readFileSync } = require('node:fs');

const [url, bodyFile, countArg, headersJson, prefix = 'burst'] = process.argv.slice(2);
const count = Number(countArg);
// BENCH_OVERLOAD_DISTINCT=1: every request's message texts are its own (each starts with the
// request's id), as a burst of real sessions' would be — no memo of an earlier request's content
// helps the proxy. Built before the clock starts.
const raw = readFileSync(bodyFile, 'utf8');
const bodies = process.env.BENCH_OVERLOAD_DISTINCT
  ? Array.from({ length: count }, (_, i) => Buffer.from(raw.replace(/"content": ?"/g, (m) => `${m}${prefix}-${i} `)))
  : null;
const body = Buffer.from(raw);
const extra = headersJson ? JSON.parse(headersJson) : {};
const dispatcher = new Agent({ connections: count, headersTimeout: 300_000, bodyTimeout: 300_000 });
const reasons = {};

async function one(i) {
  const t0 = performance.now();
  try {
    const r = await request(url, {
      method: 'POST',
      body: bodies?.[i] ?? body,
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
  const failedMs = rs.filter((r) => !r.ok).map((r) => r.ms);
  process.stdout.write(JSON.stringify({ wallMs: performance.now() - t0, ms, failed: failedMs.length, failedMs, reasons }));
});
