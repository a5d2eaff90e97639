// A Bedrock or Vertex request path, decoded into what the chat route needs: the model (it is in the
// path, not the body), whether the answer streams, and the upstream URL to forward to. Nothing from
// the path reaches a hostname unchecked: a Vertex location becomes part of the default host, so it
// must be a plain region name.
import type { CloudEnv } from './cloud-env';

export type CloudProvider = 'bedrock' | 'vertex';

export interface CloudTarget {
  provider: CloudProvider;
  /** The model id as the client named it (decoded): an inference-profile id, an ARN, `claude-…@date`. */
  model: string;
  /** The path asked for a streamed answer (invoke-with-response-stream, streamRawPredict). */
  stream: boolean;
  upstreamUrl: string;
  /** The route's path pattern, a bounded label for metrics and traces. */
  pattern: string;
}

export const BEDROCK_PREFIX = '/bedrock/model/';
export const VERTEX_PREFIX = '/vertex/v1/projects/';

const BEDROCK_ACTIONS: Record<string, boolean> = { invoke: false, 'invoke-with-response-stream': true };
const VERTEX_ACTIONS: Record<string, boolean> = { rawPredict: false, streamRawPredict: true };

/** A path that names no model the routes serve: the message says what the path must look like. */
export class CloudPathError extends Error {}

function decoded(segment: string, what: string): string {
  let v: string;
  try {
    v = decodeURIComponent(segment);
  } catch {
    throw new CloudPathError(`the ${what} is not valid percent-encoding`);
  }
  // Control characters and spaces are in no model, project or region name.
  if (v === '' || v.length > 2048 || [...v].some((c) => c <= ' ' || c === '\u007f' || /\s/.test(c)))
    throw new CloudPathError(`the ${what} "${segment.slice(0, 64)}" is not valid`);
  return v;
}

/**
 * `/bedrock/model/{modelId}/invoke[-with-response-stream]`. The id is usually percent-encoded
 * (an ARN's `:` and `/`); one sent with a bare `/` (an ARN not encoded) is read up to the action.
 */
export function bedrockTarget(path: string, env: CloudEnv['bedrock']): CloudTarget {
  const rest = path.slice(BEDROCK_PREFIX.length);
  const cut = rest.lastIndexOf('/');
  const action = cut < 0 ? '' : rest.slice(cut + 1);
  const stream = BEDROCK_ACTIONS[action];
  if (cut <= 0 || stream === undefined)
    throw new CloudPathError('a Bedrock path is /bedrock/model/{modelId}/invoke or /bedrock/model/{modelId}/invoke-with-response-stream');
  const model = decoded(rest.slice(0, cut), 'model id');
  return {
    provider: 'bedrock',
    model,
    stream,
    upstreamUrl: `${env.upstream}/model/${encodeURIComponent(model)}/${action}`,
    pattern: `/bedrock/model/{modelId}/${action}`,
  };
}

const LOCATION = /^[a-z][a-z0-9-]{1,62}$/;
const VERTEX_SHAPE =
  'a Vertex path is /vertex/v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:rawPredict or :streamRawPredict';

/** `/vertex/v1/projects/{p}/locations/{l}/publishers/anthropic/models/{m}:rawPredict|streamRawPredict`. */
export function vertexTarget(path: string, env: CloudEnv['vertex']): CloudTarget {
  const parts = path.slice(VERTEX_PREFIX.length).split('/');
  const [project, locations, location, publishers, publisher, models, last] = parts;
  if (parts.length !== 7 || locations !== 'locations' || publishers !== 'publishers' || models !== 'models' || !last)
    throw new CloudPathError(VERTEX_SHAPE);
  if (publisher !== 'anthropic') throw new CloudPathError(`only the anthropic publisher is served here (the path names "${publisher}")`);
  const colon = last.lastIndexOf(':');
  const action = colon < 0 ? '' : last.slice(colon + 1);
  const stream = VERTEX_ACTIONS[action];
  if (colon <= 0 || stream === undefined) throw new CloudPathError(VERTEX_SHAPE);
  const p = decoded(project ?? '', 'project');
  const loc = decoded(location ?? '', 'location');
  if (!LOCATION.test(loc)) throw new CloudPathError(`the location "${loc.slice(0, 64)}" is not a region name like us-east5 or global`);
  const model = decoded(last.slice(0, colon), 'model');
  const base = env.upstream ?? (loc === 'global' ? 'https://aiplatform.googleapis.com' : `https://${loc}-aiplatform.googleapis.com`);
  // `@` (claude-…@20250929) stays as the Google clients send it.
  const enc = (v: string): string => encodeURIComponent(v).replace(/%40/g, '@');
  return {
    provider: 'vertex',
    model,
    stream,
    upstreamUrl: `${base}/v1/projects/${enc(p)}/locations/${loc}/publishers/anthropic/models/${enc(model)}:${action}`,
    pattern: `/vertex/v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:${action}`,
  };
}
