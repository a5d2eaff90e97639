// The sessions bench's load: N virtual agents, each replaying corpus sessions turn by turn (one
// request at a time, the next turn sent when the previous answer is read), a new session id for
// every session it starts. argv: origin plan-file agents turns-per-agent prefix [bare].
// The plan (JSON): [{ name, path, file }] with one request body per line of `file`. Agent a starts
// at session a × sessions / agents and moves to the next session when one ends, so every target
// replays the same turns in the same order. `bare`: every request goes to /v1/chat/completions.
// Prints one JSON line: wall time, every turn's latency, and every failed turn with its status.
const { Agent, request } = require('undici');
const { readFileSync } = require('node:fs');

const [origin, planFile, agentsArg, turnsArg, prefix, bare] = process.argv.slice(2);
const agents = Number(agentsArg);
const turnsPerAgent = Number(turnsArg);
const sessions = JSON.parse(readFileSync(planFile, 'utf8')).map((s) => ({
  ...s,
  bodies: readFileSync(s.file)
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => Buffer.from(l)),
}));
const dispatcher = new Agent({ connections: agents, headersTimeout: 120_000, bodyTimeout: 120_000 });
const ms = [];
const failed = [];

async function agent(a) {
  let s = Math.floor((a * sessions.length) / agents);
  let pass = 0;
  let done = 0;
  while (done < turnsPerAgent) {
    const session = sessions[s % sessions.length];
    const id = `${prefix}-a${a}-p${pass}`;
    for (let t = 0; t < session.bodies.length && done < turnsPerAgent; t++, done++) {
      const t0 = performance.now();
      const where = { session: session.name, turn: t + 1, id };
      try {
        const r = await request(`${origin}${bare ? '/v1/chat/completions' : session.path}`, {
          method: 'POST',
          body: session.bodies[t],
          dispatcher,
          headers: {
            'content-type': 'application/json',
            'x-context-guru-session': id,
            'x-api-key': 'bench',
            authorization: 'Bearer bench',
          },
        });
        const text = await r.body.text();
        ms.push(performance.now() - t0);
        if (r.statusCode !== 200) failed.push({ ...where, status: r.statusCode, body: text.slice(0, 300) });
      } catch (err) {
        ms.push(performance.now() - t0);
        failed.push({ ...where, status: String(err.code ?? err.cause?.code ?? err.name), body: String(err.message).slice(0, 300) });
      }
    }
    s++;
    pass++;
  }
}

const t0 = performance.now();
Promise.all(Array.from({ length: agents }, (_, a) => agent(a))).then(async () => {
  const wallMs = performance.now() - t0;
  await dispatcher.close();
  process.stdout.write(JSON.stringify({ wallMs, ms, failed }));
});
