// What Bedrock and Vertex accept beyond the Anthropic shape: the model is named by the path, so the
// body must not carry one (Bedrock refuses the extra key), and `anthropic_version` must be the
// cloud's own. The tests run it over every body the gateway sends a cloud.
import { validateProviderShape } from '@context-guru/engine';
import type { CloudProvider } from './cloud-path';

const VERSION: Record<CloudProvider, string> = { bedrock: 'bedrock-2023-05-31', vertex: 'vertex-2023-10-16' };

/**
 * [] when the cloud would accept the body's shape; otherwise one sentence per violation.
 * @internal the provider shape validator of the tests, for the cloud routes
 */
export function validateCloudShape(provider: CloudProvider, body: unknown): string[] {
  const out = validateProviderShape('anthropic', body);
  if (typeof body !== 'object' || body === null) return out;
  const b = body as Record<string, unknown>;
  if ('model' in b) out.push(`model: not allowed on ${provider} (the path names the model)`);
  // Bedrock streams by its path alone and refuses the key; Vertex takes it beside :streamRawPredict.
  if (provider === 'bedrock' && 'stream' in b) out.push('stream: not allowed on bedrock (invoke-with-response-stream streams)');
  if (b['anthropic_version'] !== VERSION[provider])
    out.push(`anthropic_version: expected "${VERSION[provider]}", got ${JSON.stringify(b['anthropic_version'])}`);
  return out;
}
