import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import type { ServerResponse } from 'node:http';
import { call } from '../helpers/http';
import { closeReceivers, startReceiver } from '../helpers/receiver';
import { startTestStack } from '../helpers/stack';

type Attempt = {
  attempt: number;
  response_status: number | null;
  error: string | null;
  response_snippet: string | null;
  duration_ms: number;
};
type Delivery = { status: string; attempts: number; attempt_log: Attempt[] };

const MB = 1024 * 1024;

describe('a receiver that answers with an endless body (local stack)', () => {
  let stack: Awaited<ReturnType<typeof startTestStack>>;
  // A timeout long enough that reading on until it would cost gigabytes on loopback.
  beforeAll(async () => {
    stack = await startTestStack({ deliveryTimeoutMs: 3000 });
  });
  afterEach(() => closeReceivers());
  afterAll(() => stack.stop());

  it("costs the sender one socket read, not the timeout's worth: the test delivery is recorded with the status and the first 1 KiB", async () => {
    const key = stack.demo.writeKey.key;
    let written = 0;
    const chunk = Buffer.alloc(64 * 1024, 'z');
    const stream = (_n: number, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.on('error', () => undefined);
      const pump = () => {
        while (!res.destroyed && res.write(chunk, () => (written += chunk.length)));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    };
    let secret = '';
    const receiver = await startReceiver(() => [secret], stream);
    const port = Number(new URL(receiver.url).port);
    const toReceiver: Socket[] = [];
    const onSocket = (m: unknown) => {
      const { socket } = m as { socket: Socket };
      socket.once('connect', () => socket.remotePort === port && toReceiver.push(socket));
    };
    subscribe('net.client.socket', onSocket);
    try {
      const created = await call(stack.url, 'POST', '/v1/webhook-endpoints', {
        key,
        body: { url: receiver.url, events: ['job.created'] },
      });
      expect(created.status).toBe(201);
      secret = created.json.secret as string;
      const id = created.json.id as string;
      expect((await call(stack.url, 'POST', `/v1/webhook-endpoints/${id}/test`, { key })).status).toBe(202);

      const deliveries = async () =>
        (await call(stack.url, 'GET', `/v1/webhook-endpoints/${id}/deliveries`, { key })).json.data as Delivery[];
      let done: Delivery | undefined;
      for (
        const deadline = Date.now() + 15_000;
        !done && Date.now() < deadline;
        await new Promise((r) => setTimeout(r, 50))
      ) {
        done = (await deliveries()).find((d) => d.status !== 'pending');
      }
      expect(done).toMatchObject({
        status: 'succeeded',
        attempts: 1,
        attempt_log: [{ attempt: 1, response_status: 200, error: null, response_snippet: 'z'.repeat(1024) }],
      });
      expect(done?.attempt_log[0]?.duration_ms).toBeLessThan(3000);
      expect(receiver.received).toHaveLength(1);

      await new Promise((r) => setTimeout(r, 200));
      const read = toReceiver.reduce((sum, s) => sum + s.bytesRead, 0);
      expect(toReceiver.length).toBe(1);
      expect(read).toBeLessThanOrEqual(64 * 1024);
      // What the receiver wrote includes what the kernel buffered before the closed connection stopped it.
      expect(written).toBeLessThanOrEqual(10 * MB);
    } finally {
      unsubscribe('net.client.socket', onSocket);
    }
  });
});
