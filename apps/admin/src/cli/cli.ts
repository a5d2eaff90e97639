#!/usr/bin/env node
// context-guru-admin: the admin API from a shell. Prints the API's JSON answer; on an error prints
// "code: message" to stderr and exits 1 (2 for a usage error).
import { parseArgs } from 'node:util';
import { AdminClient, CliError } from './admin-client';
import { USAGE, runCommand } from './cli-commands';

const OPTIONS = {
  name: { type: 'string' },
  label: { type: 'string' },
  activate: { type: 'boolean' },
  config: { type: 'string' },
  version: { type: 'string' },
  reason: { type: 'string' },
  tenant: { type: 'string' },
  action: { type: 'string' },
  limit: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The command line, or a usage error naming what is wrong with it (an unknown option, a missing value). */
function parseCommandLine(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err), 'usage');
  }
}

/** Runs one command and answers its exit code; every failure is printed as `code: message`. */
export async function cli(argv: string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  try {
    const { values, positionals } = parseCommandLine(argv);
    if (values.help || positionals.length === 0) {
      process.stdout.write(`${USAGE}\n`);
      return positionals.length === 0 && !values.help ? 2 : 0;
    }
    if (!env.ADMIN_TOKEN) {
      process.stderr.write('ADMIN_TOKEN is not set (the bootstrap token or a cg_adm_… key)\n');
      return 2;
    }
    const api = new AdminClient(env.ADMIN_URL || 'http://127.0.0.1:4001', env.ADMIN_TOKEN);
    const out = await runCommand(api, positionals, values);
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return 0;
  } catch (err) {
    const e = err instanceof CliError ? err : new CliError(err instanceof Error ? err.message : String(err));
    process.stderr.write(`${e.code}: ${e.message}\n`);
    return e.code === 'usage' ? 2 : 1;
  }
}

/** The process entry: runs cli() on argv and exits with its code (the committed bin calls it too). */
export function runCliMain(): void {
  cli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    // cli() answers its own failures; this only keeps a broken stdout from ending as an unhandled rejection.
    (err: unknown) => {
      process.stderr.write(`cli: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}

if (require.main === module) runCliMain();
