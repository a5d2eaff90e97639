// The gateway's command as the chart runs it (templates/_env.tpl, cg.gatewayCommand): the one place
// its node flags are written. The benches start their gateways with exactly these flags.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './helm';
import { nodeCommand, type StartCommand } from './start-command';

const DEFINE = /\{\{- define "cg\.gatewayCommand" -\}\}\s*(\[[^\]]*\])\s*\{\{- end -\}\}/;

export function chartGatewayCommand(root = ROOT): StartCommand {
  const tpl = readFileSync(join(root, 'charts', 'context-guru', 'templates', '_env.tpl'), 'utf8');
  const m = DEFINE.exec(tpl);
  if (!m) throw new Error('charts/context-guru/templates/_env.tpl has no cg.gatewayCommand define');
  return nodeCommand(JSON.parse(m[1]!) as string[], 'the chart gateway command');
}
