import { createHash, createHmac } from 'node:crypto';
import { Sha256 as SmithySha256 } from '@smithy/core/checksum';
import { Sha256, textKeys } from '../../shared/hmac-keys';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('Sha256 (the SigV4 signer’s hash, keys made once)', () => {
  it('hashes as @smithy/core’s node:crypto Sha256 does, with and without a key of each kind', async () => {
    const keys = [undefined, 'AWS4secret', new Uint8Array([1, 2, 3, 4]), new Uint8Array([9, 8, 7]).buffer];
    for (const key of keys) {
      const ours = new Sha256(key);
      const theirs = new SmithySha256(key);
      for (const part of ['a', new Uint8Array([0, 255]), 'ünïcode']) {
        ours.update(part);
        theirs.update(typeof part === "string" ? Buffer.from(part, 'utf8') : part);
      }
      expect(hex(await ours.digest())).toBe(hex(await theirs.digest()));
    }
  });

  it('uses the same key for the same array every time, and a new one for a new array', async () => {
    const key = new Uint8Array(32).fill(7);
    const mac = async (k: Uint8Array, text: string) => {
      const h = new Sha256(k);
      h.update(text);
      return hex(await h.digest());
    };
    const expected = createHmac('sha256', Buffer.from(key)).update('x').digest('hex');
    expect(await mac(key, 'x')).toBe(expected);
    expect(await mac(key, 'x')).toBe(expected);
    expect(await mac(new Uint8Array(32).fill(8), 'x')).toBe(createHmac('sha256', Buffer.alloc(32, 8)).update('x').digest('hex'));
  });

  it('refuses more input once an HMAC is digested; reset starts again; a plain hash may be digested twice', async () => {
    const h = new Sha256('k');
    h.update('a');
    await h.digest();
    expect(() => h.update('b')).toThrow('already finished');
    h.reset();
    h.update('b');
    expect(hex(await h.digest())).toBe(createHmac('sha256', 'k').update('b').digest('hex'));
    const plain = new Sha256();
    plain.update('a');
    const once = hex(await plain.digest());
    expect(hex(await plain.digest())).toBe(once);
    expect(once).toBe(createHash('sha256').update('a').digest('hex'));
  });
});

describe('textKeys', () => {
  it('reads each text once per cache, and caches of different readings never share a key', () => {
    let reads = 0;
    const asUtf8 = textKeys((t) => (reads++, Buffer.from(t, 'utf8')));
    const asBase64 = textKeys((t) => Buffer.from(t, 'base64'));
    const a = asUtf8('c2VjcmV0');
    expect(asUtf8('c2VjcmV0')).toBe(a);
    expect(reads).toBe(1);
    expect(a.export().toString()).toBe('c2VjcmV0');
    expect(asBase64('c2VjcmV0').export().toString()).toBe('secret');
  });

  it('does not cache a text its reading refuses', () => {
    let reads = 0;
    const keys = textKeys(() => {
      reads++;
      throw new Error('empty');
    });
    expect(() => keys('x')).toThrow('empty');
    expect(() => keys('x')).toThrow('empty');
    expect(reads).toBe(2);
  });
});
