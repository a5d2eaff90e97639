// How a process that cannot start says why: an operator's mistake (a bad variable, a data
// directory another process holds) as one message; anything else with its stack.
import { DataDirLockedError } from '@context-guru/storage';
import { EnvError } from './env-errors';

export function exitOnBootFailure(err: unknown): never {
  if (err instanceof EnvError || err instanceof DataDirLockedError) process.stderr.write(`context-guru cannot start: ${err.message}\n`);
  else process.stderr.write(`context-guru failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
}
