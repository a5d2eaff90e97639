// The explicit list of every component. A name missing here cannot be configured; a name listed
// twice fails at load. Tests check this list against the component files and the docs.
import type { ComponentDefinition } from './component';
import { cacheinjectComponent } from './reformat/cacheinject.component';
import { formatComponent } from './reformat/format.component';
import { toonComponent } from './reformat/toon.component';
import { cmdfilterComponent } from './offload/cmdfilter.component';
import { collapseComponent } from './offload/collapse.component';
import { dedupComponent } from './offload/dedup.component';
import { extractComponent } from './offload/extract.component';
import { failedRunComponent } from './offload/failed-run.component';
import { maskComponent } from './offload/mask.component';
import { phiEvictComponent } from './offload/phi-evict.component';
import { skeletonComponent } from './offload/skeleton.component';
import { smartcrushComponent } from './offload/smartcrush.component';
import { summarizeComponent } from './offload/summarize.component';

export const REGISTRY: readonly ComponentDefinition[] = [
  formatComponent,
  toonComponent,
  cacheinjectComponent,
  skeletonComponent,
  dedupComponent,
  collapseComponent,
  failedRunComponent,
  cmdfilterComponent,
  extractComponent,
  smartcrushComponent,
  maskComponent,
  phiEvictComponent,
  summarizeComponent,
];

const byName = new Map<string, ComponentDefinition>();
for (const def of REGISTRY) {
  if (byName.has(def.name)) throw new Error(`component "${def.name}" is registered twice`);
  byName.set(def.name, def);
}

export function findDefinition(name: string): ComponentDefinition | undefined {
  return byName.get(name);
}
