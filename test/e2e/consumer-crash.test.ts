import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { simulatedCall } from '../../lib/cli/simulate';
import { ingestCall } from '../../shared/domain/calls';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { call } from '../helpers/http';
import { closeReceivers, startReceiver, waitFor } from '../helpers/receiver';
import { startTestStack } from '../helpers/stack';

/** The consumer in its own process (bin/consumer.ts), so it can be killed for real; `env` is the stack's, as Lambda's environment. */
async function startConsumer(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn('node_modules/.bin/tsx', ['bin/consumer.ts'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  await waitFor(() => out.includes('consumer ready'), 30000, 'consumer start');
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  process.kill(-(child.pid as number), 'SIGKILL'); // tsx and the node process it runs
  await exited;
}

describe('a consumer killed mid-batch', () => {
  let stack: Awaited<ReturnType<typeof startTestStack>>;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    stack = await startTestStack({ consumer: false, queueVisibilitySeconds: 2, deliveryTimeoutMs: 5000 });
  });
  afterAll(async () => {
    await closeReceivers();
    await Promise.all(children.map(kill));
    await stack.stop();
  });

  it('loses nothing: after a restart every event reaches the receiver', async () => {
    let secret = '';
    let slow = true;
    const receiver = await startReceiver(
      () => [secret],
      (_n, res) => (slow ? setTimeout(() => res.writeHead(204).end(), 3000) : res.writeHead(204).end()),
    );
    const created = await call(stack.url, 'POST', '/v1/webhook-endpoints', {
      key: stack.demo.writeKey.key,
      body: { url: receiver.url, events: ['call.completed'] },
    });
    secret = created.json.secret as string;

    const eventIds: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await ingestCall(
        stack.deps,
        simulatedCall(stack.demo.shop, { withJob: false, emergency: false, endedAt: new Date() }),
      );
      eventIds.push(...r.event_ids);
    }

    const first = await startConsumer(stack.env);
    children.push(first);
    await waitFor(() => receiver.received.length >= 3, 15000, 'requests in flight');
    await kill(first);
    // Killed mid-batch: requests were sent, but no attempt was recorded and no message deleted.
    const deliveries = new DynamoDeliveryStore(stack.deps.db);
    const rows = (await Promise.all(eventIds.map((id) => deliveries.listForEvent(stack.demo.shop.id, id)))).flat();
    expect(rows).toHaveLength(10);
    expect(rows.every((d) => d.attempts === 0 && d.status === 'pending')).toBe(true);

    slow = false;
    children.push(await startConsumer(stack.env));
    await waitFor(
      () => new Set(receiver.received.map((r) => r.event.id)).size === 10,
      30000,
      'every event after restart',
    );
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id']))).toEqual(new Set(eventIds));
    expect(receiver.rejected).toHaveLength(0);
    await receiver.close();
  }, 90000);
});
