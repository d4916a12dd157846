import { createHash, createHmac } from 'node:crypto';
import { Sha256 as SmithySha256 } from '@smithy/core/checksum';
import { hmacKey, Sha256 } from '../../shared/hmac-keys';

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

  it('keys by content: an array changed after use gets the MAC of its new bytes', async () => {
    const key = new Uint8Array(32).fill(7);
    const mac = async (k: Uint8Array, text: string) => {
      const h = new Sha256(k);
      h.update(text);
      return hex(await h.digest());
    };
    expect(await mac(key, 'x')).toBe(createHmac('sha256', Buffer.alloc(32, 7)).update('x').digest('hex'));
    key.fill(8);
    expect(await mac(key, 'x')).toBe(createHmac('sha256', Buffer.alloc(32, 8)).update('x').digest('hex'));
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

describe('hmacKey', () => {
  it('makes one KeyObject per key bytes, found again by content, and copies the bytes', () => {
    const bytes = Buffer.alloc(32, 1);
    const key = hmacKey(bytes);
    expect(hmacKey(Buffer.alloc(32, 1))).toBe(key);
    bytes.fill(2);
    expect(key.export()).toEqual(Buffer.alloc(32, 1));
    expect(hmacKey(bytes)).not.toBe(key);
  });

  it('keeps at most 64 keys, dropping the least recently used', () => {
    const first = hmacKey(Buffer.from('first key'));
    const second = hmacKey(Buffer.from('second key'));
    for (let i = 0; i < 63; i++) {
      hmacKey(Buffer.from(`other key ${i}`));
      if (i === 30) expect(hmacKey(Buffer.from('first key'))).toBe(first); // used again: kept
    }
    expect(hmacKey(Buffer.from('first key'))).toBe(first);
    expect(hmacKey(Buffer.from('second key'))).not.toBe(second);
  });
});
