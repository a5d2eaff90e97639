// The logging surface storage needs; the gateway's JSON logger satisfies it structurally.
export interface StorageLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: StorageLogger = { info() {}, warn() {}, error() {} };

export function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
