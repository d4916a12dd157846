import { createWebhookEndpointBody, updateWebhookEndpointBody } from '../../shared/domain/webhook-endpoints-schema';
import { toEndpointResource, type EndpointRecord } from '../../shared/domain/webhook-endpoints';
import type { AppError } from '../../shared/errors';
import { parseOrThrow } from '../../shared/http/validation';
import { HEALTHY } from '../../shared/delivery/circuit';

const base = { url: 'https://hooks.example.test/in', events: ['call.completed'] };
const refused = (schema: Parameters<typeof parseOrThrow>[0], body: unknown) => {
  try {
    parseOrThrow(schema, body);
  } catch (err) {
    return { code: (err as AppError).code, param: (err as AppError).options.param, message: (err as AppError).message };
  }
  throw new Error(`accepted: ${JSON.stringify(body)}`);
};

describe('rate_limit in the endpoint request bodies', () => {
  it('is optional on create and PATCH, an integer from 1 to 1000 or null, kept as sent', () => {
    expect(parseOrThrow(createWebhookEndpointBody, base).rate_limit).toBeUndefined();
    expect(parseOrThrow(updateWebhookEndpointBody, { description: 'x' }).rate_limit).toBeUndefined();
    for (const value of [1, 2, 1000, null]) {
      expect(parseOrThrow(createWebhookEndpointBody, { ...base, rate_limit: value }).rate_limit).toBe(value);
      expect(parseOrThrow(updateWebhookEndpointBody, { rate_limit: value }).rate_limit).toBe(value);
    }
  });

  it.each([0, -1, 1001, 2.5, '2', true, {}, [2]])(
    '%j is parameter_invalid with param "rate_limit", on create and on PATCH',
    (value) => {
      const expected = {
        code: 'parameter_invalid',
        param: 'rate_limit',
        message: 'Invalid rate_limit: must be an integer from 1 to 1000, or null',
      };
      expect(refused(createWebhookEndpointBody, { ...base, rate_limit: value })).toEqual(expected);
      expect(refused(updateWebhookEndpointBody, { rate_limit: value })).toEqual(expected);
    },
  );

  it('every endpoint object shows it, null when unset', () => {
    const record: EndpointRecord = {
      id: 'we_1',
      shop_id: 'shop_1',
      url: base.url,
      description: null,
      events: ['*'],
      filter: null,
      ordering: 'none',
      rate_limit: null,
      enabled: true,
      disabled_reason: null,
      failing_since: null,
      created_at: '2026-11-22T10:00:00.000Z',
      enabled_at: '2026-11-22T10:00:00.000Z',
      updated_at: '2026-11-22T10:00:00.000Z',
      secrets: [],
      secrets_version: 1,
      health: HEALTHY,
      leases: {},
      lease_version: 0,
    };
    expect(toEndpointResource(record).rate_limit).toBeNull();
    expect(toEndpointResource({ ...record, rate_limit: 5, rate_starts: { '1': 2 } })).toMatchObject({ rate_limit: 5 });
    expect(toEndpointResource({ ...record, rate_limit: 5, rate_starts: { '1': 2 } })).not.toHaveProperty('rate_starts');
  });
});
