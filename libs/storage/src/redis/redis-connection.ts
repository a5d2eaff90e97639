// Every Redis client of the project opens here, so each topology — one node (REDIS_URL), a Redis
// Cluster (REDIS_CLUSTER_NODES) or a Sentinel-managed primary (REDIS_SENTINELS with
// REDIS_SENTINEL_MASTER) — gets the same failover handling wherever Redis is used: the hot store,
// the control channel's publisher and subscriber, the audit anchor.
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

export interface RedisNode {
  host: string;
  port: number;
}

/** What the nodes of a cluster or the primary behind Sentinel take (the first node entry's URL gives them). */
export interface RedisAuth {
  username?: string;
  password?: string;
  /** rediss://: TLS to every node. */
  tls: boolean;
  /** With tls: the private CA (and client certificate) to use instead of the system's CAs. */
  tlsOptions?: RedisTls;
}

/** PEM texts from REDIS_TLS_CA_FILE, REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE (redis-tls.ts). */
export interface RedisTls {
  ca?: string;
  cert?: string;
  key?: string;
}

export type RedisTarget =
  /** A rediss:// REDIS_URL with a private CA or client certificate. */
  | { kind: 'node'; url: string; tlsOptions: RedisTls }
  | ({ kind: 'cluster'; nodes: RedisNode[] } & RedisAuth)
  | ({ kind: 'sentinel'; sentinels: RedisNode[]; master: string; sentinelPassword?: string } & RedisAuth);

/** REDIS_URL as given (one node), or a cluster or Sentinel target. */
export type RedisEndpoint = string | RedisTarget;

export type RedisClient = Redis | Cluster;

/** The per-connection options the callers choose (timeouts, queueing, retries). */
export type RedisConnectOptions = Pick<
  RedisOptions,
  'lazyConnect' | 'enableOfflineQueue' | 'maxRetriesPerRequest' | 'connectTimeout' | 'disconnectTimeout' | 'retryStrategy'
>;

/**
 * After a failover the old primary answers writes with READONLY until the client reconnects to
 * the new one: reconnect at once (and, where the offline queue is on, resend the command).
 */
export function reconnectOnReadonly(err: Error): 2 | false {
  return err.message.startsWith('READONLY') ? 2 : false;
}

/** Opens (or, with lazyConnect, prepares) a client for the endpoint. */
export function openRedis(endpoint: RedisEndpoint, o: RedisConnectOptions = {}): RedisClient {
  if (typeof endpoint === 'string') return new Redis(endpoint, { ...o, reconnectOnError: reconnectOnReadonly });
  // Certificates are verified either way (ioredis' default, Node's): the CA only widens whom to trust.
  if (endpoint.kind === 'node') return new Redis(endpoint.url, { ...o, tls: endpoint.tlsOptions, reconnectOnError: reconnectOnReadonly });
  const auth = { username: endpoint.username, password: endpoint.password, ...(endpoint.tls && { tls: endpoint.tlsOptions ?? {} }) };
  if (endpoint.kind === 'sentinel') {
    return new Redis({
      ...o,
      ...auth,
      sentinels: endpoint.sentinels,
      name: endpoint.master,
      sentinelPassword: endpoint.sentinelPassword,
      enableTLSForSentinelMode: endpoint.tls,
      // Subscribes to the Sentinels' +switch-master, so a promotion is seen without waiting for
      // the old primary's socket to fail.
      failoverDetector: true,
      // Sentinels that do not answer are retried like a node that does not (retryStrategy).
      ...(o.retryStrategy && { sentinelRetryStrategy: o.retryStrategy }),
      reconnectOnError: reconnectOnReadonly,
    });
  }
  const { retryStrategy, enableOfflineQueue, lazyConnect, ...node } = o;
  const cluster: ClusterOptions = {
    lazyConnect,
    enableOfflineQueue,
    clusterRetryStrategy: retryStrategy,
    // Reads go to primaries: a replica's copy may lag a turn the primary already committed.
    scaleReads: 'master',
    // A primary that fails is replaced within the cluster's node timeout; redirections and the
    // slot refresh ride that out instead of failing a command the promotion would have answered.
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    slotsRefreshTimeout: 1000,
    redisOptions: { ...node, ...auth, reconnectOnError: reconnectOnReadonly },
    // A TLS cluster (managed ones) announces IPs its certificates do not name: connect by the
    // announced address as given, so the certificate's host check uses it unchanged.
    ...(endpoint.tls && { dnsLookup: (address, callback) => callback(null, address) }),
  };
  return new Cluster(endpoint.nodes, cluster);
}

/**
 * Every key matching `pattern` on every primary (a cluster's SCAN answers for one node only),
 * handed over one SCAN page at a time. Keys of one page share a node, not necessarily a slot.
 */
export async function scanKeys(
  client: RedisClient,
  pattern: string,
  page: (keys: string[]) => Promise<void>,
  answered: <T>(p: Promise<T>) => Promise<T> = (p) => p,
): Promise<void> {
  const nodes: Redis[] = client instanceof Cluster ? client.nodes('master') : [client];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await answered(node.scan(cursor, 'MATCH', pattern, 'COUNT', 500));
      if (keys.length) await page(keys);
      cursor = next;
    } while (cursor !== '0');
  }
}

/** `REDIS_URL`, `REDIS_CLUSTER_NODES`, `REDIS_SENTINELS`, `REDIS_SENTINEL_MASTER`, `REDIS_SENTINEL_PASSWORD`. */
export interface RedisEnv {
  url?: string;
  clusterNodes?: string;
  sentinels?: string;
  sentinelMaster?: string;
  sentinelPassword?: string;
}

/** A bad Redis variable: which one, its value, what it takes. */
export interface RedisEnvProblem {
  variable: string;
  value: string;
  expected: string;
}

/**
 * The endpoint the variables name (undefined when none is set). One topology at a time: two of
 * REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS together are refused, as is a Sentinel
 * list without the master's name. Node entries are `host:port`; the first may be a
 * `redis://` / `rediss://` URL whose user, password and TLS apply to every node.
 */
export function redisEndpointFrom(env: RedisEnv): { endpoint?: RedisEndpoint; problem?: RedisEnvProblem } {
  const set = (['url', 'clusterNodes', 'sentinels'] as const).filter((k) => env[k]);
  if (set.length > 1) {
    const names = set.map((k) => VARIABLE[k]);
    return {
      problem: { variable: names[1] ?? '', value: env[set[1] ?? 'url'] ?? '', expected: `only one of ${names.join(', ')} (one topology)` },
    };
  }
  if (env.url) return { endpoint: env.url };
  const list = env.clusterNodes ?? env.sentinels;
  if (!list) return {};
  const variable = env.clusterNodes ? 'REDIS_CLUSTER_NODES' : 'REDIS_SENTINELS';
  const parsed = nodeList(list);
  if (!parsed)
    return { problem: { variable, value: list, expected: 'host:port[,host:port…] (the first may be a redis:// or rediss:// URL)' } };
  if (env.clusterNodes) return { endpoint: { kind: 'cluster', ...parsed.auth, nodes: parsed.nodes } };
  if (!env.sentinelMaster) {
    return {
      problem: {
        variable: 'REDIS_SENTINEL_MASTER',
        value: '',
        expected: 'the name of the primary the Sentinels monitor (REDIS_SENTINELS is set)',
      },
    };
  }
  return {
    endpoint: {
      kind: 'sentinel',
      ...parsed.auth,
      sentinels: parsed.nodes,
      master: env.sentinelMaster,
      ...(env.sentinelPassword && { sentinelPassword: env.sentinelPassword }),
    },
  };
}

const VARIABLE = { url: 'REDIS_URL', clusterNodes: 'REDIS_CLUSTER_NODES', sentinels: 'REDIS_SENTINELS' } as const;

function nodeList(list: string): { nodes: RedisNode[]; auth: RedisAuth } | undefined {
  const entries = list.split(',').map((s) => s.trim());
  const nodes: RedisNode[] = [];
  let auth: RedisAuth = { tls: false };
  for (const [i, entry] of entries.entries()) {
    const isUrl = /^rediss?:\/\//.test(entry);
    if (isUrl && i > 0) return undefined;
    if (!URL.canParse(isUrl ? entry : `redis://${entry}`)) return undefined;
    const u = new URL(isUrl ? entry : `redis://${entry}`);
    const port = Number(u.port);
    if (!u.hostname || !Number.isInteger(port) || port < 1 || (u.pathname !== '' && u.pathname !== '/')) return undefined;
    if (!isUrl && (u.username || u.password)) return undefined;
    if (isUrl) {
      auth = {
        tls: u.protocol === 'rediss:',
        ...(u.username && { username: decodeURIComponent(u.username) }),
        ...(u.password && { password: decodeURIComponent(u.password) }),
      };
    }
    nodes.push({ host: u.hostname.replace(/^\[|\]$/g, ''), port });
  }
  return nodes.length ? { nodes, auth } : undefined;
}
