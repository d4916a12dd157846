import { addressProblem, checkUrl, checkUrlShape, type Resolver } from '../../shared/delivery/url-guard';
import { HOSTILE_URLS } from '../helpers/hostile-urls';

const cloud = { allowInsecureLocal: false };
const local = { allowInsecureLocal: true };

/** A resolver stub: no test may need the internet. */
const resolver =
  (table: Record<string, string[]>): Resolver =>
  async (host) => {
    const found = table[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };

describe('webhook URL guard', () => {
  it('refuses port 0 under either policy', () => {
    expect(checkUrlShape('https://hooks.partner.test:0/x', cloud)).toEqual({
      ok: false,
      reason: 'must not use port 0',
    });
    expect(checkUrlShape('http://127.0.0.1:0/x', local)).toEqual({ ok: false, reason: 'must not use port 0' });
  });

  it.each(HOSTILE_URLS)('refuses %s', async (url) => {
    const verdict = await checkUrl(url, cloud, resolver({}));
    expect(verdict.ok).toBe(false);
  });

  it.each([
    ['a name resolving to a private address', 'https://hooks.internal.test/x', { 'hooks.internal.test': ['10.1.2.3'] }],
    ['a name resolving to loopback', 'https://evil.test/x', { 'evil.test': ['93.184.216.34', '127.0.0.1'] }],
    ['a name resolving to the metadata address', 'https://meta.test/x', { 'meta.test': ['169.254.169.254'] }],
    ['a name resolving to a mapped loopback', 'https://v6.test/x', { 'v6.test': ['::ffff:127.0.0.1'] }],
    [
      'a name resolving to an SIIT-translated private address',
      'https://siit.test/x',
      { 'siit.test': ['::ffff:0:a00:1'] },
    ],
    [
      'a name resolving to a Teredo address',
      'https://teredo.test/x',
      { 'teredo.test': ['2001:0:4136:e378:8000:63bf:f5ff:fffe'] },
    ],
    ['a name resolving to NAT64 of loopback', 'https://nat64.test/x', { 'nat64.test': ['64:ff9b::7f00:1'] }],
  ])('refuses %s', async (_label, url, table) => {
    const verdict = await checkUrl(url, cloud, resolver(table));
    expect(verdict).toMatchObject({ ok: false, reason: expect.stringContaining('resolves to') });
  });

  it('accepts public HTTPS targets, and names that do not resolve yet (at create time only)', async () => {
    const dns = resolver({ 'hooks.partner.test': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'] });
    expect(await checkUrl('https://hooks.partner.test:8443/in?x=1', cloud, dns)).toMatchObject({ ok: true });
    expect(await checkUrl('https://93.184.216.34/hook', cloud, dns)).toMatchObject({ ok: true });
    // Public IPv6 next to the refused Teredo prefix (2001:0::/32 only).
    expect(await checkUrl('https://[2001:4860:4860::8888]/hook', cloud, dns)).toMatchObject({ ok: true });
    expect(await checkUrl('https://not-yet.example.com/hook', cloud, dns)).toMatchObject({ ok: true });
    expect(await checkUrl('https://not-yet.example.com/hook', cloud, dns, 'refuse')).toMatchObject({ ok: false });
  });

  it('the local-stack setting allows http:// and loopback, and nothing else', async () => {
    for (const url of [
      'http://127.0.0.1:4000/hook',
      'http://localhost:4000/hook',
      'https://[::1]:4000/hook',
      'http://api.localhost/hook',
    ]) {
      expect(checkUrlShape(url, local)).toMatchObject({ ok: true });
      expect(checkUrlShape(url, cloud)).toMatchObject({ ok: false });
    }
    for (const url of [
      'http://10.0.0.1/hook',
      'http://169.254.169.254/',
      'http://[fe80::1]/',
      'https://user:pw@localhost/',
      'ftp://localhost/',
    ]) {
      expect(checkUrlShape(url, local)).toMatchObject({ ok: false });
    }
  });

  it('classifies addresses', () => {
    expect(addressProblem('8.8.8.8', cloud)).toBeNull();
    expect(addressProblem('2001:4860:4860::8888', cloud)).toBeNull();
    expect(addressProblem('127.0.0.1', cloud)).toMatch(/loopback/);
    expect(addressProblem('127.0.0.1', local)).toBeNull();
    expect(addressProblem('::ffff:10.0.0.1', cloud)).toMatch(/private/);
    expect(addressProblem('not-an-ip', cloud)).toMatch(/not an IP/);
  });
});
