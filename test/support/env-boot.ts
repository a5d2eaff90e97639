// Shared by the environment error tests: the problems one parser reports for an environment, and a
// real entry point booted with one (its exit code and what it printed).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { EnvError, type EnvProblem } from '../../libs/engine/src/env/env-errors';

const ROOT = path.join(__dirname, '../..');
const run = promisify(execFile);

/** The problems `parse` throws for `env` (none when it parses). */
export function problemsOf(parse: (env: Record<string, string>) => unknown, env: Record<string, string>): readonly EnvProblem[] {
  try {
    parse(env);
  } catch (err) {
    expect(err).toBeInstanceOf(EnvError);
    return (err as EnvError).problems;
  }
  return [];
}

/** Runs `entry` (a .ts path from the repository root) with only PATH and `env`. */
export async function bootEntry(entry: string, env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  try {
    await run(process.execPath, ['-r', './scripts/register-ts.cjs', entry], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } });
    return { code: 0, stderr: '' };
  } catch (e) {
    const x = e as { code: number; stderr: string };
    return { code: x.code, stderr: x.stderr };
  }
}
