// Envelope encryption: per-tenant data keys wrapped by the KEK, sealing bound to where a value is
// stored, replicas agreeing on one key, rotation of data keys and of the KEK, and the boot errors.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KeyRing, LocalKeyProvider, MemoryDataKeyStore, localKeyProvider } from '@context-guru/storage';

const kek = () => randomBytes(32);

describe('KeyRing', () => {
  it('seals per tenant: no plaintext in the sealed form, a value moved to another id or tenant does not open, legacy plaintext passes', async () => {
    const ring = new KeyRing(new LocalKeyProvider(kek()), new MemoryDataKeyStore());
    const sealed = await ring.seal('acme', 'PRIVATE_KEY=abc', 's:1');
    expect(sealed).not.toContain('PRIVATE_KEY');
    expect(await ring.open('acme', sealed, 's:1')).toBe('PRIVATE_KEY=abc');
    await expect(ring.open('acme', sealed, 's:2')).rejects.toMatchObject({ code: 'sealed_value_invalid' });
    await expect(ring.open('other', sealed, 's:1')).rejects.toMatchObject({ code: 'sealed_value_invalid' });
    expect(await ring.open('acme', 'written before sealing', 's:1')).toBe('written before sealing');
  });

  it('replicas sharing the key store agree on one data key (first writer wins) and so on every marker id', async () => {
    const provider = new LocalKeyProvider(kek());
    const store = new MemoryDataKeyStore();
    const [a, b] = [new KeyRing(provider, store), new KeyRing(provider, store)];
    const [ka, kb] = await Promise.all([a.forTenant('acme'), b.forTenant('acme')]);
    const digest = 'f'.repeat(64);
    expect(ka.markerId(digest)).toBe(kb.markerId(digest));
    expect(ka.markerId(digest)).toMatch(/^[0-9a-f]{16}$/);
    expect((await a.forTenant('other')).markerId(digest)).not.toBe(ka.markerId(digest));
    expect(await b.open('acme', ka.seal('x', 'k'), 'k')).toBe('x');
  });

  it('a replica with another KEK is told so, naming both keys', async () => {
    const store = new MemoryDataKeyStore();
    await new KeyRing(new LocalKeyProvider(kek()), store).forTenant('acme');
    await expect(new KeyRing(new LocalKeyProvider(kek()), store).forTenant('acme')).rejects.toMatchObject({
      code: 'encryption_key_mismatch',
      message: expect.stringMatching(/wrapped by encryption key [0-9a-f]{12}.*same CG_ENCRYPTION_KEY/),
    });
  });

  it('a data-key rotation seals new values with v2, keeps v1 values open, keeps ids, and a replica holding v1 picks v2 up', async () => {
    const provider = new LocalKeyProvider(kek());
    const store = new MemoryDataKeyStore();
    const [a, b] = [new KeyRing(provider, store), new KeyRing(provider, store)];
    const before = await a.forTenant('acme');
    await b.forTenant('acme');
    const old = before.seal('old', 'k');
    expect(await a.rotate('tenant:acme')).toBe(2);
    const after = await a.forTenant('acme');
    expect(after.current).toBe(2);
    expect(after.markerId('a'.repeat(64))).toBe(before.markerId('a'.repeat(64)));
    expect(after.macKey('audit')).toEqual(before.macKey('audit'));
    const fresh = after.seal('new', 'k');
    expect(await a.open('acme', old, 'k')).toBe('old');
    expect(await b.open('acme', fresh, 'k')).toBe('new'); // b loaded v1 only, fetches v2 once
  });

  it('a KEK rotation rewraps every data key: afterwards the new KEK alone opens what the old one sealed', async () => {
    const [oldKek, newKek] = [kek(), kek()];
    const store = new MemoryDataKeyStore();
    const sealed = await new KeyRing(new LocalKeyProvider(oldKek), store).seal('acme', 'v', 'k');
    expect(await new KeyRing(new LocalKeyProvider(newKek, [oldKek]), store).rewrapAll()).toBe(1);
    expect(await new KeyRing(new LocalKeyProvider(newKek), store).open('acme', sealed, 'k')).toBe('v');
  });
});

describe('the key-encryption key', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'cg-kek-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a server (required) never generates one; a malformed one is refused with the expected form', () => {
    expect(() => localKeyProvider({ required: true, dataDir: dir })).toThrow(expect.objectContaining({ code: 'encryption_key_missing' }));
    expect(() => localKeyProvider({ key: 'short', dataDir: dir })).toThrow(/32 bytes in base64 \(openssl rand -base64 32\)/);
    const k = randomBytes(32);
    expect(localKeyProvider({ key: k.toString('base64'), dataDir: dir }).keyId).toBe(new LocalKeyProvider(k).keyId);
    expect(localKeyProvider({ key: k.toString('hex'), dataDir: dir }).keyId).toBe(new LocalKeyProvider(k).keyId);
  });

  it('the laptop key file is generated once and reused, and refused once others may read it', () => {
    const first = localKeyProvider({ dataDir: dir }).keyId;
    expect(localKeyProvider({ dataDir: dir }).keyId).toBe(first);
    chmodSync(path.join(dir, 'encryption.key'), 0o644);
    expect(() => localKeyProvider({ dataDir: dir })).toThrow(/readable by others: chmod 600/);
  });
});
