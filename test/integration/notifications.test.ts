import { newEvent, type EventRecord } from '../../shared/domain/events';
import { NOTIFY_CLAIM_MS, notifyEndpointDisabled, type Mail, type NotifyDeps } from '../../shared/domain/notifications';
import { createShop } from '../../shared/domain/shop';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { DynamoEventStore } from '../../shared/store/events';
import { keys } from '../../shared/store/keys';
import { useFreshTable } from '../helpers/table';

describe('owner email about a disabled endpoint, once per event and never lost (DynamoDB Local)', () => {
  let deps: Deps;
  let events: DynamoEventStore;
  beforeAll(async () => {
    deps = await useFreshTable();
    events = new DynamoEventStore(deps.db);
  });

  async function disabledEvent(): Promise<EventRecord> {
    const shop = await createShop(deps, { name: 'Notify Shop', owner_email: 'owner@notify.test' });
    const data = {
      id: 'we_01jd0000000000000000000000',
      url: 'https://hooks.example.com/x',
      disabled_reason: 'failing',
    };
    const event = newEvent(shop.id, 'webhook_endpoint.disabled', data, new Date());
    await events.put(event);
    return event;
  }

  function notifyDeps(send: (mail: Mail) => Promise<void>, now = () => new Date()): NotifyDeps {
    return {
      shops: deps.shops,
      endpoints: { get: async () => null },
      mailer: { send },
      notifications: events,
      now,
    };
  }

  const notifiedAt = async (event: EventRecord) =>
    (
      await deps.db.doc.get({
        TableName: deps.db.tableName,
        Key: keys.event(event.shop_id, event.id),
        ConsistentRead: true,
      })
    ).Item?.notified_at as string | undefined;

  it('sends one email when the same event is handled twice, one after the other or at once', async () => {
    const sequential = await disabledEvent();
    const sent: Mail[] = [];
    const run = notifyDeps(async (mail) => void sent.push(mail));
    await notifyEndpointDisabled(run, sequential);
    await notifyEndpointDisabled(run, sequential);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      to: 'owner@notify.test',
      subject: 'Webhook endpoint disabled: https://hooks.example.com/x',
    });
    expect(await notifiedAt(sequential)).toEqual(expect.any(String));

    const concurrent = await disabledEvent();
    sent.length = 0;
    await Promise.all([notifyEndpointDisabled(run, concurrent), notifyEndpointDisabled(run, concurrent)]);
    expect(sent).toHaveLength(1);
  });

  it('gives the claim back when the mailer fails, so the retried record sends the email', async () => {
    const event = await disabledEvent();
    const failure = new Error('SES throttled');
    await expect(
      notifyEndpointDisabled(
        notifyDeps(() => Promise.reject(failure)),
        event,
      ),
    ).rejects.toBe(failure);
    expect(await notifiedAt(event)).toBeUndefined();

    const sent: Mail[] = [];
    const retry = notifyDeps(async (mail) => void sent.push(mail));
    await notifyEndpointDisabled(retry, event);
    await notifyEndpointDisabled(retry, event);
    expect(sent).toHaveLength(1);
  });

  it('a claim whose holder died before sending lapses: the retried record sends the email, once', async () => {
    const event = await disabledEvent();
    const t0 = Date.now();
    // An invocation claimed the email and died before sending it.
    const crashedAt = new Date(t0).toISOString();
    expect(
      await events.claimNotification(event.shop_id, event.id, crashedAt, new Date(t0 + NOTIFY_CLAIM_MS).toISOString()),
    ).toBe(true);
    const sent: Mail[] = [];
    const at = (ms: number) =>
      notifyDeps(
        async (mail) => void sent.push(mail),
        () => new Date(t0 + ms),
      );
    // While its claim is live nobody sends (the holder may still be sending)…
    await notifyEndpointDisabled(at(NOTIFY_CLAIM_MS - 1000), event);
    expect(sent).toHaveLength(0);
    // …once it has lapsed, the queue's retry (after its 6-minute visibility timeout) does, and only it.
    await notifyEndpointDisabled(at(6 * 60_000), event);
    await notifyEndpointDisabled(at(12 * 60_000), event);
    expect(sent).toHaveLength(1);
    expect(await notifiedAt(event)).toBe(new Date(t0 + 6 * 60_000).toISOString());
  });

  it('releases only its own claim, never creates an item for a missing event, and keeps the claim out of the event', async () => {
    const event = await disabledEvent();
    const T = '2026-11-21T00:00:00.000Z';
    const later = (s: number) => new Date(Date.parse(T) + s * 1000).toISOString();
    expect(await events.claimNotification(event.shop_id, event.id, T, later(120))).toBe(true);
    await events.releaseNotification(event.shop_id, event.id, later(1));
    expect(await events.claimNotification(event.shop_id, event.id, later(2), later(122))).toBe(false);
    expect(await events.get(event.shop_id, event.id)).toEqual(event);

    const gone = newEvent(event.shop_id, 'webhook_endpoint.disabled', { id: 'we_x' }, new Date());
    expect(await events.claimNotification(gone.shop_id, gone.id, T, later(120))).toBe(false);
    expect(await events.get(gone.shop_id, gone.id)).toBeNull();
    expect(await notifiedAt(gone)).toBeUndefined();
  });
});
