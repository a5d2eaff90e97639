// `npm run bench`: runs each benchmark module in turn and prints markdown for the README.
// `npm run bench -- overhead throughput` runs a subset.
import { runBilling } from './billing.bench';
import { runComponents } from './components.bench';
import { runExpandStream } from './expand-stream.bench';
import { runMemory } from './memory.bench';
import { runOverload } from './overload.bench';
import { runOverhead } from './overhead.bench';
import { runThroughput } from './throughput.bench';
import { runSharedState } from './shared-state.bench';
import { runPropagation } from './propagation.bench';
import { runTracing } from './tracing.bench';
import { runHoldout } from './holdout.bench';
import { runShadow } from './shadow.bench';
import { runSessions } from './sessions.bench';

const BENCHES: Record<string, () => Promise<string>> = {
  overhead: runOverhead,
  throughput: runThroughput,
  sessions: runSessions,
  'shared-state': runSharedState,
  billing: runBilling,
  'expand-stream': runExpandStream,
  components: runComponents,
  memory: runMemory,
  overload: runOverload,
  propagation: runPropagation,
  tracing: runTracing,
  holdout: runHoldout,
  shadow: runShadow,
};

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  for (const [name, fn] of Object.entries(BENCHES)) {
    if (wanted.length && !wanted.includes(name)) continue;
    process.stdout.write(`\n## ${name}\n\n${await fn()}\n`);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
