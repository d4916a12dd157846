import { decodeCursor, encodeCursor } from '../../shared/http/cursor';

const secret = Buffer.from('unit-test-secret-unit-test-secret-0000');
const scope = { shopId: 'shop_a', list: 'calls' };
const position = { pk: 'SHOP#shop_a', sk: 'CALL#call_01' };

describe('list cursors', () => {
  it('round-trips a position for the same shop and list', () => {
    expect(decodeCursor(encodeCursor(scope, position, secret), scope, secret)).toEqual(position);
  });

  it.each([
    ['another shop', (c: string) => c, { shopId: 'shop_b', list: 'calls' }],
    ['another list', (c: string) => c, { shopId: 'shop_a', list: 'jobs?status=' }],
    ['a truncated cursor', (c: string) => c.slice(0, -1), scope],
    ['no signature', (c: string) => c.split('.')[0] as string, scope],
    ['an extra part', (c: string) => `${c}.x`, scope],
    [
      'a re-signed payload with another key',
      () => encodeCursor(scope, position, Buffer.from('another-secret-another-secret-000000')),
      scope,
    ],
    [
      'a forged payload',
      (c: string) =>
        `${Buffer.from(JSON.stringify({ s: 'shop_a', l: 'calls', p: { pk: 'SHOP#shop_b' } })).toString('base64url')}.${c.split('.')[1]}`,
      scope,
    ],
  ])('refuses %s', (_label, mutate, checkScope) => {
    const cursor = mutate(encodeCursor(scope, position, secret));
    expect(() => decodeCursor(cursor, checkScope, secret)).toThrow(expect.objectContaining({ code: 'invalid_cursor' }));
  });

  it('refuses every other spelling of the signature, including ones that decode to the same bytes', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const cursor = encodeCursor(scope, position, secret);
    // The last character of a 32-byte base64url signature carries 2 spare bits: 3 of its
    // 63 alternatives decode to the same bytes and must still be refused.
    for (const ch of alphabet) {
      if (ch === cursor.at(-1)) continue;
      const altered = cursor.slice(0, -1) + ch;
      expect(() => decodeCursor(altered, scope, secret)).toThrow(expect.objectContaining({ code: 'invalid_cursor' }));
    }
  });
});
