// Bedrock and Vertex paths: the model comes out decoded, the upstream URL re-encodes it, the action
// says whether it streams, and a path of another shape (or a location that is no region name,
// which would become part of a hostname) is refused with what the path must look like.
import { readCloudEnv } from '../../../apps/gateway/src/cloud/cloud-env';
import { bedrockTarget, CloudPathError, vertexTarget } from '../../../apps/gateway/src/cloud/cloud-path';

const env = readCloudEnv({ AWS_REGION: 'eu-west-1' }, []);

describe('bedrockTarget', () => {
  it('reads an inference-profile id, streaming or not, toward the regional endpoint', () => {
    const t = bedrockTarget('/bedrock/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream', env.bedrock);
    expect(t).toMatchObject({ provider: 'bedrock', model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', stream: true });
    expect(t.upstreamUrl).toBe(
      'https://bedrock-runtime.eu-west-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream',
    );
    expect(bedrockTarget('/bedrock/model/anthropic.claude-haiku-4-5/invoke', env.bedrock).stream).toBe(false);
  });

  it('reads a URL-encoded ARN, and one sent with its slash bare', () => {
    const arn = 'arn:aws:bedrock:eu-west-1:123456789012:application-inference-profile/abc123';
    const enc = bedrockTarget(`/bedrock/model/${encodeURIComponent(arn)}/invoke`, env.bedrock);
    const bare = bedrockTarget(`/bedrock/model/${arn}/invoke`, env.bedrock);
    expect(enc.model).toBe(arn);
    expect(bare.model).toBe(arn);
    expect(bare.upstreamUrl).toBe(enc.upstreamUrl);
    expect(enc.upstreamUrl).toContain(
      '/model/arn%3Aaws%3Abedrock%3Aeu-west-1%3A123456789012%3Aapplication-inference-profile%2Fabc123/invoke',
    );
  });

  it('takes the signing region from BEDROCK_UPSTREAM when it is a regional endpoint', () => {
    expect(readCloudEnv({ BEDROCK_UPSTREAM: 'https://bedrock-runtime.ap-south-1.amazonaws.com' }, []).bedrock.region).toBe('ap-south-1');
    expect(readCloudEnv({ BEDROCK_UPSTREAM: 'http://127.0.0.1:9', AWS_REGION: 'us-west-2' }, []).bedrock.region).toBe('us-west-2');
  });

  it.each([
    '/bedrock/model/x/converse',
    '/bedrock/model//invoke',
    '/bedrock/model/invoke',
    '/bedrock/model/a%ZZ/invoke',
    '/bedrock/model/a%20b/invoke',
  ])('refuses %s', (path) => expect(() => bedrockTarget(path, env.bedrock)).toThrow(CloudPathError));
});

describe('vertexTarget', () => {
  const path = (loc: string, action: string) =>
    `/vertex/v1/projects/my-proj/locations/${loc}/publishers/anthropic/models/claude-sonnet-4-5@20250929:${action}`;

  it('reads project, location, model and action toward the regional endpoint', () => {
    const t = vertexTarget(path('us-east5', 'streamRawPredict'), env.vertex);
    expect(t).toMatchObject({ provider: 'vertex', model: 'claude-sonnet-4-5@20250929', stream: true });
    expect(t.upstreamUrl).toBe(
      'https://us-east5-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict',
    );
    expect(vertexTarget(path('global', 'rawPredict'), env.vertex).upstreamUrl).toMatch(/^https:\/\/aiplatform\.googleapis\.com\/v1\//);
  });

  it('uses VERTEX_UPSTREAM for every location when set', () => {
    const local = readCloudEnv({ VERTEX_UPSTREAM: 'http://127.0.0.1:7/' }, []).vertex;
    expect(vertexTarget(path('europe-west1', 'rawPredict'), local).upstreamUrl).toMatch(
      /^http:\/\/127\.0\.0\.1:7\/v1\/projects\/my-proj\//,
    );
  });

  it.each([
    ['a location that would change the host', path('evil.example.com%2F', 'rawPredict'), /not a region name/],
    [
      'another publisher',
      '/vertex/v1/projects/p/locations/us-east5/publishers/google/models/gemini:rawPredict',
      /only the anthropic publisher/,
    ],
    ['another action', path('us-east5', 'predict'), /rawPredict or :streamRawPredict/],
    ['a short path', '/vertex/v1/projects/p/locations/us-east5', /rawPredict or :streamRawPredict/],
  ])('refuses %s', (_name, p, message) => expect(() => vertexTarget(p, env.vertex)).toThrow(message));
});
