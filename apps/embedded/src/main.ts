// `npm start`: gateway on PORT and admin on ADMIN_PORT in one process (see embedded.ts).
import { EnvError, closeOnSignal, parseEnv } from '@context-guru/gateway';
import { startEmbedded } from './embedded';

async function main(): Promise<void> {
  const running = await startEmbedded(parseEnv());
  closeOnSignal(running.gw.log, () => running.close());
}

main().catch((err) => {
  if (err instanceof EnvError) process.stderr.write(`${err.message}\n`);
  else process.stderr.write(`context-guru failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
