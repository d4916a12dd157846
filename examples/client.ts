/**
 * A third-party app's first steps with the client library (client/README.md): read the shop,
 * follow every list to its end, and receive one signed webhook, verified on its raw body.
 *
 * Run against a running stack (`npm start` prints a write key):
 *   BASE_URL=http://127.0.0.1:3000 API_KEY=sk_test_… npx tsx examples/client.ts
 * It lists the shop's calls, jobs and events, then receives one signed test webhook on a loopback
 * port and verifies it (the local stack allows loopback targets), and deletes the endpoint it made.
 * `npm test` runs it the same way (test/e2e/example-client.test.ts). It imports nothing of the
 * service but the client library.
 */
import { createServer } from 'node:http';
import { once } from 'node:events';
import { ShopCalls, webhooks, type WebhookEvent } from '../client/src/index';

/** One line per event, narrowed by `type`: `data` is the call, the job or the endpoint. */
export function describeEvent(event: WebhookEvent): string {
  switch (event.type) {
    case 'call.completed':
      return `${event.type} ${event.data.id} from ${event.data.from_number} (${event.data.outcome ?? 'no outcome'})`;
    case 'job.created':
    case 'job.approved':
    case 'job.declined':
      return `${event.type} ${event.data.id} ${event.data.service} (${event.data.status}, v${event.data.version})`;
    case 'webhook_endpoint.disabled':
      return `${event.type} ${event.data.id} (${event.data.disabled_reason ?? 'enabled'})`;
    case 'webhook_endpoint.test':
      return `${event.type} for ${event.data.endpoint_id}`;
  }
}

/** A loopback receiver that verifies the first delivery it gets and acknowledges at once. */
async function startReceiver(secret: () => string) {
  let settle: (outcome: WebhookEvent | Error) => void = () => undefined;
  const arrived = new Promise<WebhookEvent | Error>((resolve) => (settle = resolve));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      webhooks.verify(Buffer.concat(chunks), req.headers, secret()).then(
        (event) => {
          res.writeHead(204).end(); // acknowledge at once, work afterwards
          settle(event);
        },
        (err: Error) => {
          // The message lands in the endpoint's attempt log: it says why the signature was refused.
          res.writeHead(400, { 'content-type': 'text/plain' }).end(err.message);
          settle(err);
        },
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}/hook`, arrived, close: () => server.close() };
}

/** Registers a loopback endpoint, asks for a test event, verifies what arrives, then deletes the endpoint. */
export async function receiveTestWebhook(client: ShopCalls, timeoutMs = 20_000): Promise<WebhookEvent> {
  let secret = '';
  const receiver = await startReceiver(() => secret);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Error>((resolve) => {
    timer = setTimeout(() => resolve(new Error(`no webhook within ${timeoutMs} ms`)), timeoutMs);
  });
  const endpoint = await client.webhookEndpoints.create({
    url: receiver.url,
    events: ['*'],
    description: 'examples/client.ts',
  });
  try {
    secret = endpoint.secret; // shown once: a real receiver keeps it in its secret store
    await client.webhookEndpoints.test(endpoint.id);
    const outcome = await Promise.race([receiver.arrived, timeout]);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  } finally {
    clearTimeout(timer);
    // Leaves nothing behind: a shop has at most 16 endpoints.
    await client.webhookEndpoints.del(endpoint.id);
    receiver.close();
  }
}

async function main(): Promise<void> {
  const { BASE_URL, API_KEY } = process.env;
  if (!BASE_URL || !API_KEY) {
    console.error('Usage: BASE_URL=http://127.0.0.1:3000 API_KEY=sk_test_… npx tsx examples/client.ts');
    process.exit(2);
  }
  const client = new ShopCalls({ baseUrl: BASE_URL, apiKey: API_KEY });
  const me = await client.me.retrieve();
  console.log(`shop: ${me.shop.id} ${me.shop.name}`);

  let calls = 0;
  // Small pages, to show that `for await` follows the cursors to the end.
  for await (const call of client.calls.list({ limit: 3 })) calls += call.object === 'call' ? 1 : 0;
  console.log(`calls: ${calls}`);

  const byStatus: Record<string, number> = {};
  for await (const job of client.jobs.list()) byStatus[job.status] = (byStatus[job.status] ?? 0) + 1;
  const statuses = Object.entries(byStatus)
    .sort()
    .map(([status, n]) => `${status} ${n}`);
  console.log(`jobs: ${statuses.join(', ')}`);

  const events = await client.events.list({ limit: 5 }).toArray({ limit: 10_000 });
  console.log(`events: ${events.length}`);
  if (events[0]) console.log(`latest event: ${describeEvent(events[0])}`);

  const received = await receiveTestWebhook(client);
  console.log(`verified webhook: ${received.id} ${describeEvent(received)}`);
}

// Run as a script (tsx examples/client.ts), not when imported.
if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'))) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
}
