// One JSON line per event on stderr, like the gateway's logger, at or above LOG_LEVEL.
import type { AdminLogger } from './admin.options';

const RANK = { debug: 0, info: 1, warn: 2, error: 3 } as const;

export function jsonLogger(level: keyof typeof RANK, sink: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): AdminLogger {
  const at = (lvl: keyof typeof RANK) => (msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] >= RANK[level]) sink(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }));
  };
  return { info: at('info'), warn: at('warn'), error: at('error') };
}
