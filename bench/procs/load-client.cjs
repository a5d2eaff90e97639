// The load generator, in its own process so it never shares an event loop with what it measures.
// argv: url bodyFile connections seconds [headers-json]. Prints one JSON line: req/s over the
// run, latency percentiles (ms), non-2xx and socket errors.
const autocannon = require('autocannon');
const { readFileSync } = require('node:fs');

const [url, bodyFile, connections, seconds, headersJson] = process.argv.slice(2);
const body = readFileSync(bodyFile);
const headers = { 'content-type': 'application/json', ...(headersJson ? JSON.parse(headersJson) : {}) };
autocannon({ url, method: 'POST', body, headers, connections: Number(connections), duration: Number(seconds) }, (err, res) => {
  if (err) {
    process.stderr.write(String(err));
    process.exit(1);
  }
  const l = res.latency;
  process.stdout.write(
    JSON.stringify({
      rps: res.requests.total / (res.duration || Number(seconds)),
      p50: l.p50,
      p99: l.p99,
      non2xx: res.non2xx,
      errors: res.errors + res.timeouts,
    }),
  );
});
