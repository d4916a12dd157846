import { putsFanOutWork } from '../../lib/local/stack';

/** The local stack wakes its stream poller only after writes that give the fan-out work. */
describe('local stream wake-ups', () => {
  const event = { pk: 'SHOP#shop_1', sk: 'EVT#evt_1', entity: 'event', type: 'call.completed' };
  const marshalled = { pk: { S: 'SHOP#shop_1' }, sk: { S: 'EVT#evt_1' }, entity: { S: 'event' } };

  it('wakes on a new event, plain or marshalled, alone or in a transaction', () => {
    expect(putsFanOutWork('PutItem', { Item: event })).toBe(true);
    expect(putsFanOutWork('PutItem', { Item: marshalled })).toBe(true);
    expect(
      putsFanOutWork('TransactWriteItems', {
        TransactItems: [{ Put: { Item: { entity: 'call' } } }, { Put: { Item: event } }],
      }),
    ).toBe(true);
  });

  it('wakes on a redelivered row, not on a row the fan-out itself wrote', () => {
    const row = (origin: string) => ({ entity: 'delivery', origin, status: 'pending' });
    expect(
      putsFanOutWork('BatchWriteItem', { RequestItems: { t: [{ PutRequest: { Item: row('redeliver') } }] } }),
    ).toBe(true);
    expect(putsFanOutWork('PutItem', { Item: row('fanout') })).toBe(false);
  });

  it('wakes on a recovery that is still running (its next page is due), not on one that has ended', () => {
    const recovery = (status: string) => ({ entity: 'recovery', status, pages: 1 });
    expect(putsFanOutWork('PutItem', { Item: recovery('running') })).toBe(true);
    expect(putsFanOutWork('PutItem', { Item: recovery('completed') })).toBe(false);
    expect(putsFanOutWork('PutItem', { Item: { entity: 'current_delivery', delivery_id: 'dlv_1' } })).toBe(false);
  });

  it("does not wake on the consumer's records, leases and stats, or on updates at all", () => {
    expect(
      putsFanOutWork('TransactWriteItems', {
        TransactItems: [{ Update: {} }, { Update: {} }, { Update: {} }] as never,
      }),
    ).toBe(false);
    expect(putsFanOutWork('UpdateItem', { Item: event })).toBe(false);
    expect(putsFanOutWork('PutItem', { Item: { entity: 'stream_checkpoint' } })).toBe(false);
  });
});
