// Preloaded (-r) into a process under study: SIGUSR2 starts the CPU profiler, the next SIGUSR2
// stops it and writes $CG_PROFILE_FILE, so a profile covers the measured load and not the boot.
const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');

const session = new Session();
session.connect();
let running = false;
process.on('SIGUSR2', () => {
  if (!running) {
    running = true;
    session.post('Profiler.enable', () =>
      session.post('Profiler.setSamplingInterval', { interval: 200 }, () => session.post('Profiler.start')),
    );
    return;
  }
  running = false;
  session.post('Profiler.stop', (err, res) => {
    writeFileSync(process.env.CG_PROFILE_FILE, err ? '{}' : JSON.stringify(res.profile));
    process.stderr.write('CG_PROFILE_WRITTEN\n');
  });
});
