// The Redis topology variables: REDIS_URL as given, a cluster's seed nodes, a Sentinel list with
// its master; one topology at a time, and every malformed list refused naming the variable.
import { redisEndpointFrom } from '@context-guru/storage';
import { parseEnv } from '../../../apps/gateway/src/env';

/** The parsed form of `host:port` entries. */
const nodes = (...hp: string[]) => hp.map((e) => ({ host: e.slice(0, e.lastIndexOf(':')), port: Number(e.slice(e.lastIndexOf(':') + 1)) }));

describe('redisEndpointFrom', () => {
  it('passes REDIS_URL through unchanged, and nothing set is no endpoint', () => {
    expect(redisEndpointFrom({ url: 'rediss://u:p@cache:6380/2' })).toEqual({ endpoint: 'rediss://u:p@cache:6380/2' });
    expect(redisEndpointFrom({})).toEqual({});
  });

  it('reads cluster nodes, taking user, password and TLS from a first URL entry', () => {
    expect(redisEndpointFrom({ clusterNodes: '10.0.0.1:7000, 10.0.0.2:7001' }).endpoint).toEqual({
      kind: 'cluster',
      tls: false,
      nodes: nodes('10.0.0.1:7000', '10.0.0.2:7001'),
    });
    expect(redisEndpointFrom({ clusterNodes: 'rediss://default:s%40cret@a:6379,[::1]:6380' }).endpoint).toEqual({
      kind: 'cluster',
      tls: true,
      username: 'default',
      password: 's@cret',
      nodes: nodes('a:6379', '::1:6380'),
    });
  });

  it('reads Sentinels with the master name and the Sentinels own password', () => {
    expect(redisEndpointFrom({ sentinels: 's1:26379,s2:26379', sentinelMaster: 'mymaster', sentinelPassword: 'x' }).endpoint).toEqual({
      kind: 'sentinel',
      tls: false,
      master: 'mymaster',
      sentinelPassword: 'x',
      sentinels: nodes('s1:26379', 's2:26379'),
    });
  });

  it.each([
    [{ clusterNodes: 'a' }, 'REDIS_CLUSTER_NODES'],
    [{ clusterNodes: 'a:0' }, 'REDIS_CLUSTER_NODES'],
    [{ clusterNodes: 'a:6379,' }, 'REDIS_CLUSTER_NODES'],
    [{ clusterNodes: 'a:6379/1' }, 'REDIS_CLUSTER_NODES'],
    [{ clusterNodes: 'a:1,redis://b:2' }, 'REDIS_CLUSTER_NODES'],
    [{ clusterNodes: 'u:p@a:6379' }, 'REDIS_CLUSTER_NODES'],
    [{ sentinels: 's1:26379' }, 'REDIS_SENTINEL_MASTER'],
    [{ url: 'redis://a:1', clusterNodes: 'a:1' }, 'REDIS_CLUSTER_NODES'],
    [{ clusterNodes: 'a:1', sentinels: 's:1', sentinelMaster: 'm' }, 'REDIS_SENTINELS'],
  ])('refuses %j, naming %s', (env, variable) => {
    const { endpoint, problem } = redisEndpointFrom(env);
    expect(endpoint).toBeUndefined();
    expect(problem?.variable).toBe(variable);
  });
});

describe('the gateway environment', () => {
  it('reports two topologies at once as invalid_redis_topology', () => {
    expect(() => parseEnv({ REDIS_URL: 'redis://a:6379', REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_MASTER: 'm' })).toThrow(
      /invalid_redis_topology: REDIS_SENTINELS="s:26379": expected only one of REDIS_URL, REDIS_SENTINELS \(one topology\)/,
    );
  });
});
