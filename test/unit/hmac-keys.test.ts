import { hmacKey } from '../../shared/hmac-keys';

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
