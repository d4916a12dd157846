/**
 * A typed client of the Shop Calls API, as a third party would write it: types generated from
 * docs/openapi.json with openapi-typescript (`npm run examples:types`), requests with
 * openapi-fetch, a paginator over every list, and webhook verification with standardwebhooks.
 *
 * Run against a running stack (`npm start` prints a write key):
 *   BASE_URL=http://127.0.0.1:3000 API_KEY=sk_test_… npx tsx examples/client.ts
 * It lists the shop's calls, jobs and events, then receives one signed test webhook on a loopback
 * port and verifies it (the local stack allows loopback targets). `npm test` runs it the same way
 * (test/e2e/example-client.test.ts). Nothing here imports the service's own code.
 */
import { createServer } from 'node:http';
import { once } from 'node:events';
import createClient from 'openapi-fetch';
import { Webhook } from 'standardwebhooks';
import type { components, paths } from './shop-calls-api';

export type Schemas = components['schemas'];
export type Event = Schemas['Event'];
export type ApiClient = ReturnType<typeof shopCallsClient>;

export function shopCallsClient(baseUrl: string, apiKey: string) {
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });
}

/** An API error in the contract's body, thrown so callers branch on `code` (docs/api.md, Errors). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Schemas['Error'] | undefined,
  ) {
    super(
      body
        ? `${status} ${body.error.code}: ${body.error.message} (request ${body.error.request_id})`
        : `HTTP ${status}`,
    );
  }
}

/** The data of a reply, or its error thrown. */
function unwrap<T>(reply: { data?: T; error?: unknown; response: Response }): T {
  if (reply.data === undefined) throw new ApiError(reply.response.status, reply.error as Schemas['Error'] | undefined);
  return reply.data;
}

interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** Every item of a list, newest first, following `next_cursor` until the last page. */
export async function* paginate<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    yield* page.data;
    cursor = page.has_more && page.next_cursor ? page.next_cursor : undefined;
  } while (cursor);
}

export const allCalls = (client: ApiClient, limit = 100) =>
  paginate(async (cursor) => unwrap(await client.GET('/v1/calls', { params: { query: { limit, cursor } } })));

export const allJobs = (client: ApiClient, status?: Schemas['Job']['status'], limit = 100) =>
  paginate(async (cursor) => unwrap(await client.GET('/v1/jobs', { params: { query: { limit, cursor, status } } })));

export const allEvents = (client: ApiClient, type?: Event['type'], limit = 100) =>
  paginate(async (cursor) => unwrap(await client.GET('/v1/events', { params: { query: { limit, cursor, type } } })));

/**
 * Verifies a delivery on its raw body and returns the typed event; throws if it is forged,
 * altered or stale. During a secret rotation pass both secrets.
 */
export function verifyWebhook(
  secrets: string[],
  rawBody: string,
  headers: Record<string, string | string[] | undefined>,
): Event {
  const flat = Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(', ') : (v ?? '')]),
  );
  let lastError: unknown;
  for (const secret of secrets) {
    try {
      return new Webhook(secret).verify(rawBody, flat) as Event;
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}

/** One line per event, narrowed by `type`: `data` is the call, the job or the endpoint. */
export function describeEvent(event: Event): string {
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

/** Registers a loopback endpoint, asks for a test event, verifies what arrives, then disables the endpoint. */
export async function receiveTestWebhook(client: ApiClient, timeoutMs = 20_000): Promise<Event> {
  let settle: (event: Event | Error) => void = () => undefined;
  const arrived = new Promise<Event | Error>((r) => (settle = r));
  let secrets: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const event = verifyWebhook(secrets, Buffer.concat(chunks).toString('utf8'), req.headers);
        res.writeHead(204).end(); // acknowledge at once, work afterwards
        settle(event);
      } catch (err) {
        res.writeHead(400).end();
        settle(err as Error);
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const timer = setTimeout(() => settle(new Error(`no webhook within ${timeoutMs} ms`)), timeoutMs);
  let endpointId: string | undefined;
  try {
    const endpoint = unwrap(
      await client.POST('/v1/webhook-endpoints', {
        body: { url: `http://127.0.0.1:${port}/hook`, events: ['*'], description: 'examples/client.ts' },
      }),
    );
    endpointId = endpoint.id;
    secrets = [endpoint.secret]; // shown once: a real receiver stores it in its secret store
    unwrap(await client.POST('/v1/webhook-endpoints/{id}/test', { params: { path: { id: endpoint.id } } }));
    const result = await arrived;
    if (result instanceof Error) throw result;
    return result;
  } finally {
    clearTimeout(timer);
    // Leaves nothing behind: a shop has at most 16 endpoints.
    if (endpointId) await client.DELETE('/v1/webhook-endpoints/{id}', { params: { path: { id: endpointId } } });
    server.close();
  }
}

async function main(): Promise<void> {
  const { BASE_URL, API_KEY } = process.env;
  if (!BASE_URL || !API_KEY) {
    console.error('Usage: BASE_URL=http://127.0.0.1:3000 API_KEY=sk_test_… npx tsx examples/client.ts');
    process.exit(2);
  }
  const client = shopCallsClient(BASE_URL, API_KEY);
  const me = unwrap(await client.GET('/v1/me'));
  console.log(`shop: ${me.shop.id} ${me.shop.name}`);

  let calls = 0;
  for await (const call of allCalls(client, 3)) calls += call.object === 'call' ? 1 : 0; // small pages: the paginator follows cursors
  console.log(`calls: ${calls}`);

  const byStatus: Record<string, number> = {};
  for await (const job of allJobs(client)) byStatus[job.status] = (byStatus[job.status] ?? 0) + 1;
  console.log(
    `jobs: ${Object.entries(byStatus)
      .sort()
      .map(([s, n]) => `${s} ${n}`)
      .join(', ')}`,
  );

  const events: Event[] = [];
  for await (const event of allEvents(client, undefined, 5)) events.push(event);
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
