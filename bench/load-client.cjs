// Runs autocannon in its own process so the load generator does not share the measured event loop.
const autocannon = require('autocannon');
const [url, bodyFile, connections, duration, session] = process.argv.slice(2);
const body = require('node:fs').readFileSync(bodyFile, 'utf8');
const headers = { 'content-type': 'application/json' };
if (session === '1') headers['x-context-guru-session'] = 'bench';
autocannon({ url, method: 'POST', body, headers, connections: Number(connections), duration: Number(duration) }, (err, res) => {
  if (err) {
    process.stderr.write(String(err));
    process.exit(1);
  }
  process.stdout.write(JSON.stringify({ rps: res.requests.average, non2xx: res.non2xx, p50: res.latency.p50 }));
});
