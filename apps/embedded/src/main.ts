// `npm start`: gateway on PORT and admin on ADMIN_PORT in one process (see embedded.ts).
import { exitOnBootFailure, tuneHeap } from '@context-guru/engine';
import { closeOnSignal, parseEnv } from '@context-guru/gateway';
import { startEmbedded } from './embedded';

async function main(): Promise<void> {
  // The laptop default is held to its RSS bound: V8 may flush idle bytecode here (heap-tuning.ts).
  tuneHeap({ keepBytecode: false });
  const running = await startEmbedded(parseEnv());
  // The one place the generated token is ever shown: the page's URL, printed once.
  if (running.adminTokenGenerated) process.stdout.write(`savings page (ADMIN_TOKEN generated for this run): ${running.uiUrl}\n`);
  else process.stdout.write(`savings page: ${running.uiUrl.replace(/#token=.*$/, '')}#token=<ADMIN_TOKEN>\n`);
  closeOnSignal(running.gw.log, () => running.close());
}

main().catch(exitOnBootFailure);
