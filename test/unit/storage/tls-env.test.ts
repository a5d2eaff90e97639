// The TLS variables as the processes read them: REDIS_TLS_* put the PEM texts on a rediss://
// endpoint of any topology; libpq's PGSSL* fill what DATABASE_URL leaves out; every file is read
// at once, and a missing, unreadable or non-PEM one, a certificate without its key, TLS files for
// a plaintext redis:// endpoint, or an sslmode node-pg does not know is refused naming where it
// came from — never quoting DATABASE_URL, which holds the password.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresTls, redisEndpointFrom, withRedisTls } from '@context-guru/storage';
import { parseEnv } from '../../../apps/gateway/src/env';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
let dir: string;
let ca: string;
let notPem: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cg-tls-env-'));
  ca = join(dir, 'ca.pem');
  notPem = join(dir, 'ca.der');
  writeFileSync(ca, PEM);
  writeFileSync(notPem, Buffer.from([0x30, 0x82, 0x01]));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('withRedisTls', () => {
  it('leaves the endpoint alone when no variable is set', () => {
    expect(withRedisTls('rediss://cache:6380', {})).toEqual({ endpoint: 'rediss://cache:6380', problems: [] });
  });

  it('puts the CA (and a client certificate) on a rediss:// endpoint of each topology', () => {
    expect(withRedisTls('rediss://cache:6380', { caFile: ca })).toEqual({
      endpoint: { kind: 'node', url: 'rediss://cache:6380', tlsOptions: { ca: PEM } },
      problems: [],
    });
    const cluster = redisEndpointFrom({ clusterNodes: 'rediss://a:7000,b:7001' }).endpoint;
    expect(withRedisTls(cluster, { caFile: ca, certFile: ca, keyFile: ca }).endpoint).toMatchObject({
      kind: 'cluster',
      tls: true,
      tlsOptions: { ca: PEM, cert: PEM, key: PEM },
    });
  });

  it('refuses a missing or non-PEM file, a certificate without its key, and a plaintext endpoint', () => {
    expect(withRedisTls('rediss://cache:6380', { caFile: join(dir, 'nope.pem') }).problems).toEqual([
      { variable: 'REDIS_TLS_CA_FILE', value: join(dir, 'nope.pem'), expected: 'a readable PEM file (ENOENT)' },
    ]);
    expect(withRedisTls('rediss://cache:6380', { caFile: notPem }).problems).toEqual([
      { variable: 'REDIS_TLS_CA_FILE', value: notPem, expected: 'a PEM file (no -----BEGIN line in it)' },
    ]);
    expect(withRedisTls('rediss://cache:6380', { certFile: ca }).problems).toEqual([
      { variable: 'REDIS_TLS_KEY_FILE', value: '', expected: 'set with REDIS_TLS_CERT_FILE (a client certificate and its key)' },
    ]);
    const plain = withRedisTls('redis://cache:6379', { caFile: ca });
    expect(plain.endpoint).toBeUndefined();
    expect(plain.problems).toEqual([expect.objectContaining({ variable: 'REDIS_TLS_CA_FILE', value: ca })]);
    expect(plain.problems[0]!.expected).toMatch(/^a rediss:\/\/ endpoint to apply to/);
  });
});

describe('postgresTls', () => {
  const url = 'postgres://cg:s3cret@db:5432/cg';

  it('folds PGSSLROOTCERT and PGSSLMODE into a URL without them; the URL’s own parameters win', () => {
    const folded = postgresTls(url, { rootCert: ca, mode: 'verify-full' });
    expect(folded.problems).toEqual([]);
    expect(new URL(folded.url).searchParams.get('sslrootcert')).toBe(ca);
    expect(new URL(folded.url).searchParams.get('sslmode')).toBe('verify-full');
    const own = `${url}?sslmode=verify-full&sslrootcert=${encodeURIComponent(ca)}`;
    expect(postgresTls(own, { rootCert: join(dir, 'other.pem') })).toEqual({ url: own, problems: [] });
    expect(postgresTls(url, {})).toEqual({ url, problems: [] });
  });

  it('refuses what it cannot use, naming the parameter or the variable, never the URL', () => {
    const missing = join(dir, 'nope.pem');
    expect(postgresTls(`${url}?sslmode=verify-full&sslrootcert=${missing}`, {}).problems).toEqual([
      { variable: 'DATABASE_URL', value: `sslrootcert=${missing}`, expected: 'a readable PEM file (ENOENT)' },
    ]);
    expect(postgresTls(url, { rootCert: missing }).problems).toEqual([
      { variable: 'PGSSLROOTCERT', value: missing, expected: 'a readable PEM file (ENOENT)' },
    ]);
    expect(postgresTls(`${url}?sslmode=verify-ful`, {}).problems).toEqual([
      {
        variable: 'DATABASE_URL',
        value: 'sslmode=verify-ful',
        expected: 'one of disable, prefer, require, verify-ca, verify-full, no-verify',
      },
    ]);
    expect(postgresTls(`${url}?sslcert=${ca}`, {}).problems).toEqual([
      {
        variable: 'DATABASE_URL',
        value: `sslcert=${ca}`,
        expected: 'a client certificate and its key together (sslcert with sslkey, or PGSSLCERT with PGSSLKEY)',
      },
    ]);
    // With no DATABASE_URL at all, a PGSSL* file set is still checked.
    expect(postgresTls(undefined, { rootCert: missing }).problems).toHaveLength(1);
  });
});

describe('the gateway environment', () => {
  it('hands the stores the endpoint with the CA and the URL with it folded in', () => {
    const env = parseEnv({ REDIS_URL: 'rediss://cache:6380', REDIS_TLS_CA_FILE: ca, DATABASE_URL: 'postgres://db/cg', PGSSLROOTCERT: ca });
    expect(env.redisUrl).toEqual({ kind: 'node', url: 'rediss://cache:6380', tlsOptions: { ca: PEM } });
    expect(new URL(env.databaseUrl!).searchParams.get('sslrootcert')).toBe(ca);
  });

  it('folds the same PGSSL* variables into MIGRATION_DATABASE_URL, naming it when its own file is missing', () => {
    const env = parseEnv({ DATABASE_URL: 'postgres://bouncer/cg', MIGRATION_DATABASE_URL: 'postgresql://primary/cg', PGSSLROOTCERT: ca });
    expect(new URL(env.migrationDatabaseUrl!).searchParams.get('sslrootcert')).toBe(ca);
    expect(new URL(env.migrationDatabaseUrl!).host).toBe('primary');
    expect(() => parseEnv({ MIGRATION_DATABASE_URL: 'postgres://u:pw@primary/cg?sslrootcert=/nope' })).toThrow(
      /invalid_tls: MIGRATION_DATABASE_URL="sslrootcert=\/nope": expected a readable PEM file \(ENOENT\)$/,
    );
  });

  it('reports every bad TLS variable as invalid_tls', () => {
    expect(() =>
      parseEnv({ REDIS_URL: 'redis://cache:6379', REDIS_TLS_CA_FILE: ca, DATABASE_URL: 'postgres://u:pw@db/cg?sslrootcert=/nope' }),
    ).toThrow(
      /invalid_tls: REDIS_TLS_CA_FILE=".*ca\.pem": expected a rediss:\/\/ endpoint.*\n.*invalid_tls: DATABASE_URL="sslrootcert=\/nope": expected a readable PEM file \(ENOENT\)$/,
    );
  });
});
