import { makeHandler } from '../../functions/notify';
import type { EventRecord } from '../../shared/domain/events';
import type { Mail } from '../../shared/domain/notifications';

const event = {
  id: 'evt_01jd0000000000000000000001',
  shop_id: 'shop_01jd0000000000000000000001',
  type: 'webhook_endpoint.disabled',
  data: { id: 'we_01jd0000000000000000000001', url: 'https://hooks.partner.test/x', disabled_reason: 'failing' },
} as unknown as EventRecord;

function deps(send: (mail: Mail) => Promise<void>) {
  const claims = new Set<string>();
  return {
    events: { get: (_shop: string, id: string) => Promise.resolve(id === event.id ? event : null) },
    shops: { get: () => Promise.resolve({ name: 'Ace', owner_email: 'owner@ace.test' } as never) },
    endpoints: { get: () => Promise.resolve(null) },
    mailer: { send },
    notifications: {
      claimNotification: (_s: string, id: string) => Promise.resolve(!claims.has(id) && Boolean(claims.add(id))),
      releaseNotification: (_s: string, id: string) => Promise.resolve(void claims.delete(id)),
      markNotified: () => Promise.resolve(),
    },
    now: () => new Date('2026-11-21T10:00:00.000Z'),
  };
}

const record = (messageId: string, body: unknown) =>
  ({ messageId, body: typeof body === 'string' ? body : JSON.stringify(body) }) as never;

describe('owner-email function (its own queue, off the stream path)', () => {
  it('sends the email of a queued webhook_endpoint.disabled event once', async () => {
    const sent: Mail[] = [];
    const shared = deps((m) => Promise.resolve(void sent.push(m)));
    const handler = makeHandler(() => shared);
    const msg = { shop_id: event.shop_id, event_id: event.id };
    expect(await handler({ Records: [record('m1', msg)] })).toEqual({ batchItemFailures: [] });
    expect(await handler({ Records: [record('m2', msg)] })).toEqual({ batchItemFailures: [] });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ to: 'owner@ace.test', subject: expect.stringContaining('hooks.partner.test') });
  });

  it('reports only the message whose email SES refused, so the queue retries it alone; a gone event or junk is dropped', async () => {
    const handler = makeHandler(() => deps(() => Promise.reject(new Error('Email address is not verified'))));
    const out = await handler({
      Records: [
        record('refused', { shop_id: event.shop_id, event_id: event.id }),
        record('gone', { shop_id: event.shop_id, event_id: 'evt_01jd0000000000000000000009' }),
        record('junk', 'not json'),
      ],
    });
    expect(out).toEqual({ batchItemFailures: [{ itemIdentifier: 'refused' }] });
  });
});
