// A real second process for the DATA_DIR lock tests: opens the embedded database at argv[2],
// says "ready" and holds it until killed (or prints the refusal and exits 1).
import { PgliteSqlClient } from '@context-guru/storage';

PgliteSqlClient.open({ dataDir: process.argv[2]! }).then(
  async (client) => {
    await client.query('SELECT 1');
    process.stdout.write(`ready ${process.pid}\n`);
    setInterval(() => undefined, 1 << 30);
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
