// `npm start` as its argv: the package's start script is the one place the embedded process's
// node flags are written; the image's CMD must say the same, and the memory bench runs exactly it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './helm';

export interface StartCommand {
  /** Flags given to node before the entry (V8 and Node options). */
  nodeArgs: string[];
  /** The entry script, relative to the repository root. */
  entry: string;
}

/** `argv` as `node [flags] <entry>`; `what` names it in the error when it is not that. */
export function nodeCommand(argv: readonly string[], what: string): StartCommand {
  const [node, ...rest] = argv;
  if (node !== 'node' || rest.length === 0) throw new Error(`${what} must run \`node [flags] <entry>\`: ${argv.join(' ')}`);
  return { nodeArgs: rest.slice(0, -1), entry: rest[rest.length - 1]! };
}

/** An npm script of the package (`start` by default) as node's argv. */
export function npmStartCommand(root = ROOT, script = 'start'): StartCommand {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  return nodeCommand((pkg.scripts[script] ?? '').trim().split(/\s+/), `npm run ${script}`);
}
