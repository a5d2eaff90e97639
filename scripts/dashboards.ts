// Writes charts/context-guru/dashboards/*.json from the typed sources (npm run dashboards).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DASHBOARDS, renderDashboard } from '../apps/gateway/src/observability/dashboards';

const dir = join(__dirname, '..', 'charts', 'context-guru', 'dashboards');
for (const [name, d] of Object.entries(DASHBOARDS)) writeFileSync(join(dir, `${name}.json`), renderDashboard(d));
