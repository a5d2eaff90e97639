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

export function npmStartCommand(root = ROOT): StartCommand {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const [node, ...rest] = pkg.scripts.start!.trim().split(/\s+/);
  if (node !== 'node' || rest.length === 0) throw new Error(`npm start must run \`node [flags] <entry>\`: ${pkg.scripts.start}`);
  return { nodeArgs: rest.slice(0, -1), entry: rest[rest.length - 1]! };
}
