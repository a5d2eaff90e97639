// The gateway's own credentials for the cloud upstreams, applied to each call it sends. Bedrock:
// a Bedrock API key as a bearer token, else SigV4 with the environment's keys, else keys from STS
// for the pod's web identity (IRSA). Vertex: a fixed access token, else one exchanged for a
// service-account key's signed assertion at its token_uri, else the metadata server's (GKE
// workload identity). Nothing here is ever logged or sent back to a client.
import { createSign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { BedrockEnv, CloudEnv, VertexEnv } from './cloud-env';
import type { CloudProvider } from './cloud-path';
import { signV4, type AwsCredentials } from './sigv4';
import { CloudCredentialsError, fetchText, TokenCache } from './token-cache';

interface SignRequest {
  url: string;
  headers: Record<string, string>;
  body: string | Buffer | readonly Buffer[];
}

/** The headers to add to one upstream call. */
export type CloudAuth = (r: SignRequest) => Promise<Record<string, string>>;

function xmlField(xml: string, name: string): string {
  const m = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  if (!m?.[1]) throw new CloudCredentialsError(`STS answered without ${name}`);
  return m[1].replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>');
}

function webIdentityKeys(w: NonNullable<BedrockEnv['webIdentity']>): TokenCache<AwsCredentials> {
  return new TokenCache(async () => {
    let token: string;
    try {
      token = readFileSync(w.tokenFile, 'utf8').trim();
    } catch (err) {
      throw new CloudCredentialsError('AWS_WEB_IDENTITY_TOKEN_FILE could not be read', err);
    }
    const form = new URLSearchParams({
      Action: 'AssumeRoleWithWebIdentity',
      Version: '2011-06-15',
      RoleArn: w.roleArn,
      RoleSessionName: w.sessionName,
      WebIdentityToken: token,
    });
    const xml = await fetchText('STS', w.sts, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    const keys = {
      accessKeyId: xmlField(xml, 'AccessKeyId'),
      secretAccessKey: xmlField(xml, 'SecretAccessKey'),
      sessionToken: xmlField(xml, 'SessionToken'),
    };
    return { value: keys, expiresAt: Date.parse(xmlField(xml, 'Expiration')) };
  });
}

function bedrockAuth(env: BedrockEnv, now: () => Date): CloudAuth {
  if (env.bearer) {
    const header = { authorization: `Bearer ${env.bearer}` };
    return () => Promise.resolve(header);
  }
  const sts = env.webIdentity ? webIdentityKeys(env.webIdentity) : null;
  const fixed = env.keys;
  return async (r) => {
    const keys = fixed ?? (await sts?.get());
    if (!keys)
      throw new CloudCredentialsError(
        'no Bedrock credentials: set AWS_BEARER_TOKEN_BEDROCK, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN',
      );
    return signV4(
      { method: 'POST', url: new URL(r.url), headers: r.headers, body: r.body, region: env.region, service: 'bedrock', now: now() },
      keys,
    );
  };
}

interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  token_uri: string;
}

function readKey(file: string): ServiceAccountKey {
  let k: Partial<ServiceAccountKey>;
  try {
    k = JSON.parse(readFileSync(file, 'utf8')) as Partial<ServiceAccountKey>;
  } catch (err) {
    throw new CloudCredentialsError('GOOGLE_APPLICATION_CREDENTIALS could not be read as a JSON key file', err);
  }
  if (typeof k.client_email !== 'string' || typeof k.private_key !== 'string')
    throw new CloudCredentialsError('GOOGLE_APPLICATION_CREDENTIALS is not a service-account key (client_email, private_key)');
  return { client_email: k.client_email, private_key: k.private_key, token_uri: k.token_uri ?? 'https://oauth2.googleapis.com/token' };
}

const b64url = (b: Buffer | string): string => Buffer.from(b).toString('base64url');
const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/** The OAuth2 JWT-bearer grant (RFC 7523) with the key's signed assertion. */
async function serviceAccountToken(file: string): Promise<{ value: string; expiresAt: number }> {
  const key = readKey(file);
  const iat = Math.floor(Date.now() / 1000);
  const head = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const claims = b64url(JSON.stringify({ iss: key.client_email, scope: SCOPE, aud: key.token_uri, iat, exp: iat + 3600 }));
  let sig: string;
  try {
    sig = b64url(createSign('RSA-SHA256').update(`${head}.${claims}`).sign(key.private_key));
  } catch (err) {
    throw new CloudCredentialsError("the service-account key's private_key could not sign", err);
  }
  const body = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: `${head}.${claims}.${sig}` });
  const text = await fetchText('the token endpoint', key.token_uri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
  });
  return accessToken(text);
}

function accessToken(text: string): { value: string; expiresAt: number } {
  let j: { access_token?: unknown; expires_in?: unknown };
  try {
    j = JSON.parse(text) as typeof j;
  } catch {
    throw new CloudCredentialsError('the token endpoint answered something that is not JSON');
  }
  if (typeof j.access_token !== 'string') throw new CloudCredentialsError('the token endpoint answered without access_token');
  const ttl = typeof j.expires_in === 'number' ? j.expires_in : 3600;
  return { value: j.access_token, expiresAt: Date.now() + ttl * 1000 };
}

function vertexAuth(env: VertexEnv): CloudAuth {
  if (env.token) {
    const header = { authorization: `Bearer ${env.token}` };
    return () => Promise.resolve(header);
  }
  const keyFile = env.keyFile;
  const cache = new TokenCache<string>(async () =>
    keyFile
      ? serviceAccountToken(keyFile)
      : accessToken(
          await fetchText('the metadata server', `http://${env.metadataHost}/computeMetadata/v1/instance/service-accounts/default/token`, {
            method: 'GET',
            headers: { 'metadata-flavor': 'Google' },
          }),
        ),
  );
  return async () => ({ authorization: `Bearer ${await cache.get()}` });
}

export interface CloudAuths {
  bedrock: CloudAuth;
  vertex: CloudAuth;
}

export function createCloudAuths(env: CloudEnv, now: () => Date = () => new Date()): CloudAuths {
  return { bedrock: bedrockAuth(env.bedrock, now), vertex: vertexAuth(env.vertex) };
}

/** Client headers that are credentials for a cloud (or the gateway's own): never forwarded there. */
export function isClientCredential(name: string, provider: CloudProvider): boolean {
  if (name === 'authorization' || name === 'x-api-key' || name === 'x-goog-api-key') return true;
  // A client's SigV4 parts (date, token, content hash) would contradict the gateway's signature.
  return provider === 'bedrock' && name.startsWith('x-amz-');
}
