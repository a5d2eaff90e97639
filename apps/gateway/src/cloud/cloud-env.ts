// What the Bedrock and Vertex routes read from the environment: where each service is and the
// gateway's own credentials for it (the client's never reach the cloud: its signature cannot
// survive a rewritten body, and with CLAUDE_CODE_SKIP_*_AUTH it sends none). The variables are the
// clouds' standard ones, so a pod's IRSA / workload-identity setup or a laptop's shell works as is.
import { envReaders, HTTP_URL, type EnvProblem } from '@context-guru/engine';
import type { AwsCredentials } from './sigv4';

type Source = Record<string, string | undefined>;

export interface BedrockEnv {
  /** BEDROCK_UPSTREAM, else the regional bedrock-runtime endpoint. */
  upstream: string;
  /** The SigV4 signing region: BEDROCK_UPSTREAM's host, else AWS_REGION / AWS_DEFAULT_REGION, else us-east-1. */
  region: string;
  /** AWS_BEARER_TOKEN_BEDROCK: a Bedrock API key, sent as a bearer token (preferred over SigV4, as the AWS SDKs do). */
  bearer: string | undefined;
  /** AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN. */
  keys: AwsCredentials | undefined;
  /** AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN (IRSA): exchanged at STS for temporary keys. */
  webIdentity: { tokenFile: string; roleArn: string; sessionName: string; sts: string } | undefined;
}

export interface VertexEnv {
  /** VERTEX_UPSTREAM; unset: `https://{location}-aiplatform.googleapis.com` per request (`global`: no prefix). */
  upstream: string | undefined;
  /** VERTEX_ACCESS_TOKEN: a fixed OAuth2 access token (tests, short jobs). */
  token: string | undefined;
  /** GOOGLE_APPLICATION_CREDENTIALS: a service-account key file, exchanged at its token_uri. */
  keyFile: string | undefined;
  /** GCE_METADATA_HOST (metadata.google.internal): the metadata server of GKE workload identity. */
  metadataHost: string;
}

export interface CloudEnv {
  bedrock: BedrockEnv;
  vertex: VertexEnv;
}

const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;

function bedrockRegion(upstream: string | undefined, fallback: string): string {
  if (!upstream) return fallback;
  const m = /^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com$/.exec(new URL(upstream).hostname);
  return m?.[1] ?? fallback;
}

export function readCloudEnv(src: Source, problems: EnvProblem[]): CloudEnv {
  const { text, url, oneOf } = envReaders(src, problems);
  let region = text('AWS_REGION') ?? text('AWS_DEFAULT_REGION') ?? 'us-east-1';
  if (!REGION.test(region)) {
    problems.push({ code: 'invalid_choice', variable: 'AWS_REGION', message: `AWS_REGION "${region}": expected a region like us-east-1` });
    region = 'us-east-1';
  }
  const explicit = url('BEDROCK_UPSTREAM', undefined, HTTP_URL);
  const signing = bedrockRegion(explicit, region);
  const id = text('AWS_ACCESS_KEY_ID');
  const secret = text('AWS_SECRET_ACCESS_KEY');
  if ((id === undefined) !== (secret === undefined))
    problems.push({
      code: 'invalid_choice',
      variable: id === undefined ? 'AWS_ACCESS_KEY_ID' : 'AWS_SECRET_ACCESS_KEY',
      message: 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: expected both or neither',
    });
  const tokenFile = text('AWS_WEB_IDENTITY_TOKEN_FILE');
  const roleArn = text('AWS_ROLE_ARN');
  return {
    bedrock: {
      upstream: explicit ?? `https://bedrock-runtime.${signing}.amazonaws.com`,
      region: signing,
      bearer: text('AWS_BEARER_TOKEN_BEDROCK'),
      keys: id && secret ? { accessKeyId: id, secretAccessKey: secret, sessionToken: text('AWS_SESSION_TOKEN') } : undefined,
      webIdentity:
        tokenFile && roleArn
          ? {
              tokenFile,
              roleArn,
              sessionName: text('AWS_ROLE_SESSION_NAME') ?? 'context-guru',
              // AWS_STS_REGIONAL_ENDPOINTS=legacy keeps the global endpoint; regional is the SDKs' default now.
              sts:
                url('AWS_ENDPOINT_URL_STS', undefined, HTTP_URL) ??
                (oneOf('AWS_STS_REGIONAL_ENDPOINTS', ['regional', 'legacy'] as const, 'regional') === 'legacy'
                  ? 'https://sts.amazonaws.com'
                  : `https://sts.${region}.amazonaws.com`),
            }
          : undefined,
    },
    vertex: {
      upstream: url('VERTEX_UPSTREAM', undefined, HTTP_URL),
      token: text('VERTEX_ACCESS_TOKEN'),
      keyFile: text('GOOGLE_APPLICATION_CREDENTIALS'),
      metadataHost: text('GCE_METADATA_HOST') ?? 'metadata.google.internal',
    },
  };
}
