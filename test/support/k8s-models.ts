// Offline validation of rendered objects against the Kubernetes OpenAPI schemas (kubernetes-models,
// prometheus-operator's CRDs for the ServiceMonitor), and typed views of the validated objects.
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IJob } from 'kubernetes-models/batch/v1/Job';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IService } from 'kubernetes-models/v1/Service';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { find, type K8sObject } from './helm';

export type {
  IDeployment,
  IJob,
  IConfigMap,
  IService,
  IPodSpec,
  IContainer,
  IHorizontalPodAutoscaler,
  IPodDisruptionBudget,
  IServiceMonitor,
};

interface Validatable {
  validate(): void;
}
type ModelClass = new (data: unknown) => Validatable;

function modelPath(o: K8sObject): string {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  if (group === 'monitoring.coreos.com') return `@kubernetes-models/prometheus-operator/${group}/${version}/${o.kind}`;
  return group ? `kubernetes-models/${group}/${version}/${o.kind}` : `kubernetes-models/${version}/${o.kind}`;
}

/** Throws naming the object when its kind is unknown or it breaks the schema. */
export function validateObject(o: K8sObject): void {
  const path = modelPath(o);
  let mod: Record<string, ModelClass>;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the model module is chosen at run time from apiVersion/kind
    mod = require(path) as Record<string, ModelClass>;
  } catch {
    throw new Error(`${o.kind}/${o.metadata.name}: no offline schema for ${o.apiVersion} ${o.kind}`);
  }
  const Model = mod[o.kind];
  if (!Model) throw new Error(`${o.kind}/${o.metadata.name}: ${path} exports no ${o.kind}`);
  try {
    new Model(o).validate();
  } catch (err) {
    throw new Error(`${o.kind}/${o.metadata.name} is invalid: ${(err as Error).message}`, { cause: err });
  }
}

export const deployment = (objs: K8sObject[], suffix: string) => find(objs, 'Deployment', suffix) as unknown as IDeployment;
export const job = (objs: K8sObject[], suffix: string) => find(objs, 'Job', suffix) as unknown as IJob;
export const service = (objs: K8sObject[], suffix: string) => find(objs, 'Service', suffix) as unknown as IService;
export const configMaps = (objs: K8sObject[]) => objs.filter((o) => o.kind === 'ConfigMap') as unknown as IConfigMap[];

export function podSpec(w: IDeployment | IJob): IPodSpec {
  const spec = w.spec?.template.spec;
  if (!spec) throw new Error(`${w.kind}/${w.metadata?.name}: no pod spec`);
  return spec;
}

export function onlyContainer(w: IDeployment | IJob): IContainer {
  const cs = podSpec(w).containers;
  if (cs.length !== 1) throw new Error(`${w.kind}/${w.metadata?.name}: expected one container, got ${cs.length}`);
  return cs[0]!;
}

/** Labels a selector's matchLabels require are all present in `labels`. */
export function selects(matchLabels: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  const want = Object.entries(matchLabels ?? {});
  return want.length > 0 && want.every(([k, v]) => labels?.[k] === v);
}
