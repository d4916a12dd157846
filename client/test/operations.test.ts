/**
 * Every operation of docs/openapi.json has its method, and sends what the document says: its HTTP
 * method and path, and an Idempotency-Key exactly where the document accepts one. An operation added
 * to the document without a method here fails the first test.
 */
import { readFileSync } from 'node:fs';
import type { ShopCalls } from '../src';
import { type Scripted, scriptedServer, testClient } from './support/server';

interface Operation {
  operationId: string;
  parameters?: { name: string; in: string }[];
}
const document = JSON.parse(readFileSync('docs/openapi.json', 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
};
const HTTP_METHODS = ['get', 'post', 'patch', 'delete', 'put'];
const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => HTTP_METHODS.includes(method))
    .map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
);

const since = '2026-11-01T00:00:00.000Z';
/** How the client calls each operation, with `x_1` (and `rcv_1`) as the path's ids. */
const calls: Record<string, (client: ShopCalls) => PromiseLike<unknown>> = {
  listCalls: (c) => c.calls.list(),
  getCall: (c) => c.calls.retrieve('x_1'),
  getCallTranscript: (c) => c.calls.transcript('x_1'),
  getCallSummary: (c) => c.calls.summary('x_1'),
  listJobs: (c) => c.jobs.list({ status: 'pending' }),
  getJob: (c) => c.jobs.retrieve('x_1'),
  approveJob: (c) => c.jobs.approve('x_1', { version: 1 }),
  declineJob: (c) => c.jobs.decline('x_1', { version: 1, reason: 'booked up' }),
  getShop: (c) => c.shop.retrieve(),
  updateShop: (c) => c.shop.update({ paused: true }),
  getMe: (c) => c.me.retrieve(),
  createWebhookEndpoint: (c) => c.webhookEndpoints.create({ url: 'https://a.example/h', events: ['job.created'] }),
  listWebhookEndpoints: (c) => c.webhookEndpoints.list(),
  getWebhookEndpoint: (c) => c.webhookEndpoints.retrieve('x_1'),
  updateWebhookEndpoint: (c) => c.webhookEndpoints.update('x_1', { enabled: false }),
  deleteWebhookEndpoint: (c) => c.webhookEndpoints.del('x_1'),
  rotateWebhookEndpointSecret: (c) => c.webhookEndpoints.rotateSecret('x_1'),
  testWebhookEndpoint: (c) => c.webhookEndpoints.test('x_1'),
  listWebhookEndpointDeliveries: (c) => c.webhookEndpoints.listDeliveries('x_1', { status: 'failed' }),
  getWebhookEndpointStats: (c) => c.webhookEndpoints.stats('x_1'),
  recoverWebhookEndpoint: (c) => c.webhookEndpoints.recover('x_1', { since }),
  getWebhookEndpointRecovery: (c) => c.webhookEndpoints.retrieveRecovery('x_1', 'rcv_1'),
  listEvents: (c) => c.events.list({ type: 'job.created' }),
  getEvent: (c) => c.events.retrieve('x_1'),
  getEventFeed: (c) => c.events.feed({ since }),
  redeliverEvent: (c) => c.events.redeliver('x_1'),
  listEventTypes: (c) => c.eventTypes.list(),
  createPortalSession: (c) => c.portalSessions.create({ read_only: true }),
  listPortalSessions: (c) => c.portalSessions.list(),
  deletePortalSession: (c) => c.portalSessions.del('x_1'),
};

let server: Scripted;
beforeAll(async () => {
  server = await scriptedServer([
    { status: 200, json: { object: 'list', data: [], has_more: false, next_cursor: null } },
  ]);
});
afterAll(() => server.close());

describe('operations', () => {
  it('has a method for every operation of docs/openapi.json, and none for one it lacks', () => {
    expect(Object.keys(calls).sort()).toEqual(operations.map((o) => o.operation.operationId).sort());
  });

  it.each(operations.map((o) => [o.operation.operationId, o] as const))(
    '%s',
    async (operationId, { path, method, operation }) => {
      const { client } = testClient(server.baseUrl);
      const call = calls[operationId];
      if (!call) throw new Error(`no method for ${operationId}`);
      const before = server.requests.length;
      await call(client);
      const sent = server.requests.slice(before);
      expect(sent).toHaveLength(1);
      const [request] = sent;
      expect(request?.method).toBe(method);
      expect(request?.url.split('?')[0]).toBe(path.replace('{recovery_id}', 'rcv_1').replace('{id}', 'x_1'));
      expect(request?.headers.authorization).toBe('Bearer sk_test_client');
      const acceptsKey = (operation.parameters ?? []).some((p) => p.in === 'header' && p.name === 'Idempotency-Key');
      expect(typeof request?.headers['idempotency-key']).toBe(acceptsKey ? 'string' : 'undefined');
      if (request?.body) expect(request.headers['content-type']).toBe('application/json');
    },
  );

  it('encodes ids in paths, so an id cannot reach another path', async () => {
    const { client } = testClient(server.baseUrl);
    await client.calls.retrieve('../shop?x=1');
    expect(server.requests.at(-1)?.url).toBe('/v1/calls/..%2Fshop%3Fx%3D1');
  });
});
