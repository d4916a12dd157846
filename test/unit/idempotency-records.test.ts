import { recordRef } from '../../shared/store/idempotency';

/**
 * Record keys and payload hashes must equal what Powertools idempotency (2.35.0, with the
 * JMESPaths `[principal.shopId, headers."idempotency-key"]` and
 * `[requestContext.http.method, rawPath, jsonBody]`, key prefix IDEMPOTENCY) computed for the
 * same requests: records it wrote are honoured until they expire. Expected values were
 * computed with that library.
 */
describe('idempotency record keys and payload hashes', () => {
  const shop = 'shop_01jd0000000000000000000000';

  it.each([
    [
      'a PATCH with a body',
      [shop, 'key-1'],
      ['PATCH', '/v1/shop', { greeting: 'Hello', trade: 'hvac' }],
      'IDEMPOTENCY#5HsWTISJWG89snI55IUzDA==',
      '+oLNWmIra9prJ5PYXwxV5w==',
    ],
    [
      'the same body with its keys in another order',
      [shop, 'key-1'],
      ['PATCH', '/v1/shop', { trade: 'hvac', greeting: 'Hello' }],
      'IDEMPOTENCY#5HsWTISJWG89snI55IUzDA==',
      '+oLNWmIra9prJ5PYXwxV5w==',
    ],
    [
      'nested objects, arrays, mixed-case and numeric keys, escapes',
      ['shop_x', 'K é"\\'],
      [
        'POST',
        '/v1/webhook-endpoints',
        {
          url: 'https://a.test/h',
          enabled_events: ['job.created', 'call.ended'],
          Zeta: 1,
          alpha: { b: [{ y: null, X: true }], A: 2.5 },
          '10': 'n',
          '2': 'm',
          a: 'low',
          A: 'up',
        },
      ],
      'IDEMPOTENCY#jGGtExcZVA+WIHQO/xuhCA==',
      's5r1JPZqYnuGqklpU/rYuw==',
    ],
    [
      'no body',
      ['shop_y', 'k'],
      ['POST', '/v1/jobs/job_1/approve', null],
      'IDEMPOTENCY#UEtWcVGUCeSLTF1UP8dOXw==',
      '4p9/kXJWyG2MWP5f/gD1+A==',
    ],
    [
      'an empty body',
      ['shop_y', 'k'],
      ['POST', '/v1/jobs/job_1/approve', {}],
      'IDEMPOTENCY#UEtWcVGUCeSLTF1UP8dOXw==',
      '8YoqfY/iIM4zD2B9a+Usvg==',
    ],
  ])('%s', (_, keyParts, payloadParts, key, payloadHash) => {
    expect(recordRef(keyParts, payloadParts, { owner: 'key_1', shopId: shop })).toEqual({
      key,
      payloadHash,
      owner: 'key_1',
      shopId: shop,
    });
  });

  it('keeps the API key that made the request beside the hashes, not in them', () => {
    const a = recordRef([shop, 'k'], ['PATCH', '/v1/shop', { greeting: 'a' }], { owner: 'key_a', shopId: shop });
    const b = recordRef([shop, 'k'], ['PATCH', '/v1/shop', { greeting: 'a' }], { owner: 'key_b', shopId: shop });
    expect([b.key, b.payloadHash]).toEqual([a.key, a.payloadHash]);
    expect(b.owner).not.toBe(a.owner);
  });

  it('another shop, key or body gives another record or hash', () => {
    const base = recordRef([shop, 'k'], ['PATCH', '/v1/shop', { greeting: 'a' }], { owner: 'key_1', shopId: shop });
    expect(
      recordRef(['shop_other', 'k'], ['PATCH', '/v1/shop', { greeting: 'a' }], { owner: 'key_1', shopId: shop }).key,
    ).not.toBe(base.key);
    expect(
      recordRef([shop, 'k2'], ['PATCH', '/v1/shop', { greeting: 'a' }], { owner: 'key_1', shopId: shop }).key,
    ).not.toBe(base.key);
    const otherBody = recordRef([shop, 'k'], ['PATCH', '/v1/shop', { greeting: 'b' }], {
      owner: 'key_1',
      shopId: shop,
    });
    expect(otherBody.key).toBe(base.key);
    expect(otherBody.payloadHash).not.toBe(base.payloadHash);
  });
});
