import { hashKey } from '@context-guru/storage';
import { applyTenantPath, findTenantKey, splitTenantPath } from '../../../apps/gateway/src/http/tenant-key';
import { upstreamRequestHeaders } from '../../../apps/gateway/src/http/forward-headers';

const KEY = 'cg_live_abcdefghijklmnopqrstuvwxyz012345';

describe('tenant key', () => {
  it('is read from x-context-guru-key, a Bearer authorization or x-api-key, and hashed', () => {
    for (const headers of [{ 'x-context-guru-key': KEY }, { authorization: `Bearer ${KEY}` }, { 'x-api-key': KEY }]) {
      expect(findTenantKey(headers)).toEqual({ kind: 'key', hash: hashKey(KEY) });
    }
  });

  it('ignores a provider credential in the auth slots', () => {
    expect(findTenantKey({ authorization: 'Bearer sk-proj-123', 'x-api-key': 'sk-ant-1' })).toEqual({ kind: 'none' });
  });

  it('two different keys in one request are a conflict; the same key twice is not', () => {
    expect(findTenantKey({ 'x-context-guru-key': KEY, 'x-api-key': `${KEY}x` }).kind).toBe('conflict');
    expect(findTenantKey({ 'x-context-guru-key': KEY, authorization: `Bearer ${KEY}` }).kind).toBe('key');
  });

  it('a key in an auth slot never reaches the provider', () => {
    const out = upstreamRequestHeaders({ authorization: `Bearer ${KEY}`, 'x-context-guru-key': KEY, 'x-api-key': 'sk-ant-real' });
    expect(out.authorization).toBeUndefined();
    expect(out['x-context-guru-key']).toBeUndefined();
    expect(out['x-api-key']).toBe('sk-ant-real');
  });
});

describe('path form /t/<key>/…', () => {
  it('strips the key from the URL and keeps the rest, query included', () => {
    expect(splitTenantPath(`/t/${KEY}/openai/v1/chat/completions?x=1`)).toEqual({ url: '/openai/v1/chat/completions?x=1', key: KEY });
    expect(splitTenantPath(`/t/${KEY}/anthropic/v1/messages`)).toEqual({ url: '/anthropic/v1/messages', key: KEY });
    expect(splitTenantPath('/openai/v1/chat/completions')).toBeNull();
  });

  it('moves the key into the pseudo-header, replacing one a client sent', () => {
    const req = { url: `/t/${KEY}/stats?tenant=a`, headers: { 'x-context-guru-path-key': 'forged' } as Record<string, string | undefined> };
    applyTenantPath(req);
    expect(req.url).toBe('/stats?tenant=a');
    expect(findTenantKey(req.headers)).toEqual({ kind: 'key', hash: hashKey(KEY) });
    const plain = { url: '/stats', headers: { 'x-context-guru-path-key': 'forged' } as Record<string, string | undefined> };
    applyTenantPath(plain);
    expect(findTenantKey(plain.headers)).toEqual({ kind: 'none' });
  });
});
