// `npm start`: gateway on PORT and admin on ADMIN_PORT in one process (see embedded.ts).
import { closeOnSignal, exitOnBootFailure, parseEnv } from '@context-guru/gateway';
import { startEmbedded } from './embedded';

async function main(): Promise<void> {
  const running = await startEmbedded(parseEnv());
  closeOnSignal(running.gw.log, () => running.close());
}

main().catch(exitOnBootFailure);
