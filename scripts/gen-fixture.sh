#!/usr/bin/env bash
# Runs one component over a fixture folder's input.json (+ config.yaml) and prints the output it
# produces to /tmp/out.json, for a human to REVIEW before saving it as output.json.
# usage: scripts/gen-fixture.sh <component> <fixture-dir>
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=test/unit/.gen-$$; mkdir -p "$tmp"; trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/gen.test.ts" <<'TS'
import { findDefinition, Pipeline } from '@context-guru/components';
import { testCtx } from '../../support/ctx';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { parse } from 'yaml';
it('gen', async () => {
  const dir = process.env.FIX!;
  const input = JSON.parse(readFileSync(dir + '/input.json', 'utf8'));
  const cfg = existsSync(dir + '/config.yaml') ? parse(readFileSync(dir + '/config.yaml', 'utf8')) : undefined;
  const def = findDefinition(process.env.COMP!)!;
  const ctx = testCtx({ provider: input.provider, cache: input.cache, existingBreakpoints: input.existingBreakpoints,
    snapshot: { frozen: new Map(Object.entries(input.frozen ?? {})), lost: new Set(input.lost ?? []), kept: new Set(input.kept ?? []) } });
  const r = await new Pipeline([def.create(def.options(cfg ?? undefined, 'x'))]).run(input.messages, ctx);
  const rep = r.reports[0]!;
  if (rep.error) console.log('ERROR', rep.error);
  writeFileSync('/tmp/out.json', JSON.stringify({ messages: r.messages, gates: rep.gates, keys: rep.keys.length }, null, 2) + '\n');
});
TS
FIX="$(cd "$2" && pwd)" COMP="$1" node --experimental-vm-modules node_modules/jest/bin/jest.js "$tmp" --silent=false 2>&1 | grep -E 'ERROR|✓|✕|Tests:'
