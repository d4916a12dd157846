import type { IncomingMessage } from 'node:http';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { APIGatewayProxyEventV2, DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { simulatedCall } from '../../lib/cli/simulate';
import { ensureTable, localClient, startDynamoDbLocal } from '../../lib/local/dynamodb-local';
import { toAuthorizerEvent, toProxyEvent } from '../../lib/local/lambda-events';
import { seedDemo, seedDemoData } from '../../lib/local/seed';
import { configFromEnv } from '../../shared/config';
import { lookUpKey, presentedKey } from '../../shared/domain/api-keys';
import { ingestCall } from '../../shared/domain/calls';
import { carryingEvent, messageOf } from '../../shared/delivery/records';
import { newDelivery } from '../../shared/delivery/fan-out';
import { newEvent, type EventRecord } from '../../shared/domain/events';
import type { Shop } from '../../shared/domain/shop';
import { createEndpoint, toEndpointResource } from '../../shared/domain/webhook-endpoints';
import { toAuthorizerContext } from '../../shared/http/auth-context';
import { newId } from '../../shared/ids';
import { resolve, routes, type Route } from '../../shared/routes';
import { EnvelopeCipher } from '../../shared/secrets/envelope';
import { KmsDataKeys } from '../../shared/secrets/kms-data-keys';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { eventFromItem, putEvent } from '../../shared/store/events';
import {
  apiKeyDeps,
  endpointLifecycleDeps,
  callDeps,
  endpointDeps,
  eventWriterDeps,
  jobDeps,
  portalSessionDeps,
  shopDeps,
  urlGuardDeps,
} from '../../shared/wiring/api';
import { createPortalSession } from '../../shared/domain/portal-sessions';
import { recoverEndpoint } from '../../shared/delivery/recovery';
import { dynamoOf } from '../../shared/wiring/clients';
import { FUNCTION_TABLE_PARTS } from '../../lib/constructs/entries';
import type { AwsStub } from './aws-stub';
import type { Item } from './stub-table';

/** The SDK clients a function constructs; its reference constructs exactly these and calls each once. */
export type SdkClient = 'DynamoDB' | 'KMS' | 'SQS' | 'Scheduler' | 'SES';

export interface ColdStartCase {
  /** What its handler is invoked with, as the service that invokes it sends it. */
  event: unknown;
  /**
   * Read from the wiring its handler names (`lambdaDeps(...)`, shared/wiring/{api,pipeline}.ts); checked against its
   * bundle.
   */
  clients: SdkClient[];
  /** Why the answer is not the one this request gets when it works (null: it worked). */
  check(result: unknown): string | null;
  /** AWS requests the first invocation must make, or the scenario went off the path it stands for. */
  needs?: string[];
  /**
   * For a function with no SDK client, whose SDK reference would be an empty handler: a
   * reference that loads the libraries it loads and serves the same answer (bench/reference/),
   * as `[label, entry]`.
   */
  sameLibraries?: [label: string, entry: string];
}

const REGION = 'us-east-1';
const KEY_ARN = 'arn:aws:kms:us-east-1:123456789012:key/6f1c2a4e-0d3b-4c5e-9a7f-1b2c3d4e5f60';
const SEED_TABLE = 'cold-start';

/** What the seeded table holds that the events name. */
interface Seed {
  items: Item[];
  shop: Shop;
  key: string;
  authorizer: ReturnType<typeof toAuthorizerContext>;
  endpointId: string;
  callId: string;
  pendingJobId: string;
  event: EventRecord;
  deliveryMessage: ReturnType<typeof messageOf>;
  disabledEventId: string;
  /** A recovery of the endpoint's last day, for the route that shows its progress. */
  recoveryId: string;
  /** A portal session of the shop, for the route that deletes one. */
  portalSessionId: string;
}

/**
 * A shop as the local stack's demo seeds it (keys, a few days of calls, jobs in every
 * status, their events), a webhook endpoint whose secret is sealed with the stub's KMS data
 * key, two calls after it, their deliveries overdue for the sweeper and a webhook_endpoint.disabled event for the
 * owner email, written by the product's own code to a DynamoDB Local table and copied out.
 */
export async function seedTable(stub: AwsStub): Promise<Seed> {
  const dynamodb = await startDynamoDbLocal({ port: 0 });
  try {
    await ensureTable(dynamodb.endpoint, SEED_TABLE);
    const writer = seedWriter(dynamodb.endpoint, stub);
    const { demo, endpointId, disabledEventId } = await seedShopWithEndpoint(writer, stub);
    const { latest, earlier, job, call } = await readBack(dynamodb.endpoint);
    const delivery = await seedOverdueDeliveries(writer, endpointId, [latest, earlier]);
    const recovery = await recoverEndpoint(
      { ...endpointLifecycleDeps(writer.config), now: () => new Date() },
      demo.shop.id,
      endpointId,
      { since: new Date(Date.now() - 24 * 3_600_000).toISOString() },
    );
    const session = await createPortalSession(
      { ...portalSessionDeps(writer.config), shops: writer.deps.shops },
      { shopId: demo.shop.id, mode: 'test', key: null },
      {},
      'https://api.shop-calls.example',
    );
    const outcome = await lookUpDemoKey(writer, demo.writeKey.key);
    if (!outcome.ok || !job || !call) throw new Error('the demo data has no valid key, pending job or call');
    writer.db.client.destroy();
    writer.kms.destroy();
    return {
      items: await scan(dynamodb.endpoint, SEED_TABLE),
      shop: demo.shop,
      key: demo.writeKey.key,
      authorizer: toAuthorizerContext(outcome),
      endpointId,
      callId: String(call.id),
      pendingJobId: String(job.id),
      event: latest,
      deliveryMessage: carryingEvent(messageOf(delivery), latest),
      disabledEventId,
      recoveryId: recovery.id,
      portalSessionId: session.id,
    };
  } finally {
    await dynamodb.stop();
  }
}

type SeedWriter = ReturnType<typeof seedWriter>;

/** The product's stores on the DynamoDB Local table, with the clients to destroy once the seed is written. */
function seedWriter(endpoint: string, stub: AwsStub) {
  const config = configFromEnv({
    TABLE_NAME: SEED_TABLE,
    DYNAMODB_ENDPOINT: endpoint,
    AWS_REGION: REGION,
    WEBHOOK_ALLOW_INSECURE_LOCAL: 'true',
  });
  const db = dynamoOf(config);
  // The endpoint's secret is sealed as the functions will open it: with a KMS data key (the stub's).
  const kms = new KMSClient({
    endpoint: stub.url,
    region: REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const cipher = new EnvelopeCipher(new KmsDataKeys(kms, KEY_ARN));
  const deps = {
    ...shopDeps(config),
    ...apiKeyDeps(config),
    ...callDeps(config),
    ...jobDeps(config),
    ...endpointDeps(config),
    ...urlGuardDeps(config),
    ...eventWriterDeps(config),
    cipher,
  };
  return { config, db, kms, deps };
}

/** The demo shop and its data, its webhook endpoint (to the stub), two calls after it and its disabled event. */
async function seedShopWithEndpoint(writer: SeedWriter, stub: AwsStub) {
  const { db, deps } = writer;
  const demo = await seedDemo(deps);
  await seedDemoData(deps, demo.shop);
  const endpoint = (await createEndpoint(deps, demo.shop.id, {
    url: `${stub.url}/hooks/shop`,
    events: ['*'],
    description: 'Bench receiver',
  } as never)) as { id: string };
  const stored = await deps.endpoints.get(demo.shop.id, endpoint.id);
  if (!stored) throw new Error('the seeded endpoint is not in the table');
  // Two calls after the endpoint exists: their events are the ones it receives (fan-out, consumer, sweeper).
  for (let i = 0; i < 2; i++)
    await ingestCall(deps, simulatedCall(demo.shop, { withJob: false, emergency: false, endedAt: new Date() }));
  const disabled = newEvent(
    demo.shop.id,
    'webhook_endpoint.disabled',
    toEndpointResource({ ...stored, enabled: false, disabled_reason: 'failing' }),
    new Date(),
    endpoint.id,
  );
  await putEvent(db, disabled);
  return { demo, endpointId: endpoint.id, disabledEventId: disabled.id };
}

/** The two latest call.completed events, a pending job and a call, as the table holds them so far. */
async function readBack(endpoint: string) {
  const scanned = await scan(endpoint, SEED_TABLE);
  const plain = scanned.map((i) => unmarshall(i) as Record<string, unknown>);
  const bySk = (prefix: string) =>
    plain.filter((i) => String(i.sk).startsWith(prefix)).sort((a, b) => String(b.sk).localeCompare(String(a.sk)));
  const callEvents = bySk('EVT#')
    .filter((i) => i.type === 'call.completed')
    .map(eventFromItem);
  const [latest, earlier] = callEvents;
  if (!latest || !earlier) throw new Error('the demo data has fewer than two call.completed events');
  return { latest, earlier, job: bySk('JOB#').find((i) => i.status === 'pending'), call: bySk('CALL#')[0] };
}

/**
 * Open deliveries of two events, off their fast path and overdue (their messages lost): the
 * sweeper finds them, and the endpoint's list has a second page. Returns the first event's.
 */
async function seedOverdueDeliveries(writer: SeedWriter, endpointId: string, events: EventRecord[]) {
  const past = new Date(Date.now() - 10 * 60_000);
  const rows = events.map((e) => ({
    ...newDelivery(e, { id: newId('dlv', past.getTime()), endpointId, origin: 'fanout', now: past }),
    sweep_at: new Date(past.getTime() + 60_000).toISOString(),
  }));
  await new DynamoDeliveryStore(writer.db).createAll(rows);
  return rows[0] as (typeof rows)[number];
}

/** What the authorizer makes of the demo's write key. */
async function lookUpDemoKey(writer: SeedWriter, key: string) {
  const presented = presentedKey(`Bearer ${key}`);
  if (!presented.ok) throw new Error('the demo key does not parse');
  return lookUpKey(writer.deps.apiKeys, presented);
}

async function scan(endpoint: string, tableName: string): Promise<Item[]> {
  const client = localClient(endpoint);
  const items: Item[] = [];
  let start: Item | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start }));
    items.push(...((page.Items ?? []) as Item[]));
    start = page.LastEvaluatedKey as Item | undefined;
  } while (start);
  client.destroy();
  return items;
}

/**
 * A request as API Gateway (HTTP API, payload 2.0) hands it to the route's function: the local adapter's event, built
 * the same way.
 */
function httpEvent(
  method: string,
  pathAndQuery: string,
  headers: Record<string, string>,
  body?: unknown,
): APIGatewayProxyEventV2 {
  const url = new URL(pathAndQuery, 'https://api.shop-calls.example');
  const payload = body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(body));
  const all = {
    host: url.host,
    'user-agent': 'shop-calls-client/1.0',
    ...(payload.length > 0 ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
    ...headers,
  };
  const req = {
    rawHeaders: Object.entries(all).flat(),
    httpVersion: '1.1',
    socket: { remoteAddress: '198.51.100.24' },
  } as unknown as IncomingMessage;
  const resolution = resolve(method, url.pathname);
  const route = resolution.kind === 'route' ? resolution : null;
  return toProxyEvent(req, {
    method,
    url,
    body: payload,
    routeKey: route?.route.handler ? `${route.route.method} ${route.route.path}` : '$default',
    pathParameters: route?.pathParameters,
    requestId: 'Yx3kQjJ1IAMEVnA=',
    domainName: url.host,
  });
}

const statusOf = (result: unknown) => (result as { statusCode?: number } | null)?.statusCode;
const succeeded = (result: unknown) => {
  const status = statusOf(result);
  return status !== undefined && status >= 200 && status < 300
    ? null
    : `answered ${status}: ${String((result as { body?: string } | null)?.body ?? '').slice(0, 300)}`;
};
const noFailures = (result: unknown) => {
  const failures = (result as { batchItemFailures?: unknown[] } | null)?.batchItemFailures;
  return failures && failures.length === 0 ? null : `reported failures: ${JSON.stringify(result)}`;
};

/**
 * API operations that use no table (lib/constructs/entries.ts FUNCTION_TABLE_PARTS), with their same-library
 * references.
 */
const API_WITHOUT_SDK: Record<string, [label: string, entry: string]> = {
  ListEventTypes: ['Logger + middy + the same list', 'bench/reference/event-types.ts'],
};

/** Each function's first invocation: a request that goes the way a working one goes, to the seeded table. */
export function coldStartCases(stub: AwsStub, seed: Seed): Record<string, ColdStartCase> {
  const auth = { authorization: `Bearer ${seed.key}` };
  return {
    ...apiCases(apiRequests(stub, seed), seed, auth),
    Authorizer: {
      event: toAuthorizerEvent(httpEvent('GET', '/v1/shop', auth)),
      clients: ['DynamoDB'],
      check: (r) =>
        (r as { isAuthorized?: boolean; context?: { authenticated?: unknown } }).isAuthorized === true &&
        (r as { context: { authenticated?: unknown } }).context.authenticated === true
          ? null
          : `refused: ${JSON.stringify(r)}`,
    },
    Fallback: {
      event: httpEvent('GET', '/v1/openapi.json', {}),
      clients: [],
      check: succeeded,
      sameLibraries: ['Logger + the OpenAPI document', 'bench/reference/openapi-document.ts'],
    },
    ...pipelineCases(seed),
    Portal: {
      event: portalEvent(),
      clients: [],
      check: succeeded,
      sameLibraries: ['Logger + the portal page', 'bench/reference/portal-page.ts'],
    },
  };
}

type ApiRequest = [method: string, path: string, body?: unknown];

/** A request to each API operation, by operationId, on the seeded shop's endpoint, event, call and job. */
function apiRequests(stub: AwsStub, seed: Seed): Record<string, ApiRequest> {
  const ep = seed.endpointId;
  const since = new Date(Date.now() - 24 * 3_600_000).toISOString();
  return {
    createWebhookEndpoint: [
      'POST',
      '/v1/webhook-endpoints',
      { url: `${stub.url}/hooks/new`, events: ['call.completed', 'job.created'], description: 'Dispatch board' },
    ],
    listWebhookEndpoints: ['GET', '/v1/webhook-endpoints'],
    getWebhookEndpoint: ['GET', `/v1/webhook-endpoints/${ep}`],
    updateWebhookEndpoint: ['PATCH', `/v1/webhook-endpoints/${ep}`, { description: 'Dispatch board (new)' }],
    deleteWebhookEndpoint: ['DELETE', `/v1/webhook-endpoints/${ep}`],
    listWebhookEndpointDeliveries: ['GET', `/v1/webhook-endpoints/${ep}/deliveries?limit=1`],
    getWebhookEndpointStats: ['GET', `/v1/webhook-endpoints/${ep}/stats`],
    recoverWebhookEndpoint: ['POST', `/v1/webhook-endpoints/${ep}/recover`, { since }],
    getWebhookEndpointRecovery: ['GET', `/v1/webhook-endpoints/${ep}/recoveries/${seed.recoveryId}`],
    rotateWebhookEndpointSecret: ['POST', `/v1/webhook-endpoints/${ep}/rotate-secret`],
    testWebhookEndpoint: ['POST', `/v1/webhook-endpoints/${ep}/test`],
    listEvents: ['GET', '/v1/events?limit=2'],
    getEventFeed: ['GET', '/v1/events/feed?limit=2'],
    getEvent: ['GET', `/v1/events/${seed.event.id}`],
    listEventTypes: ['GET', '/v1/event-types'],
    redeliverEvent: ['POST', `/v1/events/${seed.event.id}/redeliver`],
    createPortalSession: ['POST', '/v1/portal-sessions', { expires_in: 1800, read_only: true }],
    listPortalSessions: ['GET', '/v1/portal-sessions?limit=2'],
    deletePortalSession: ['DELETE', `/v1/portal-sessions/${seed.portalSessionId}`],
    listCalls: ['GET', '/v1/calls?limit=2'],
    getCall: ['GET', `/v1/calls/${seed.callId}`],
    getCallTranscript: ['GET', `/v1/calls/${seed.callId}/transcript`],
    getCallSummary: ['GET', `/v1/calls/${seed.callId}/summary`],
    listJobs: ['GET', '/v1/jobs?limit=1'],
    getJob: ['GET', `/v1/jobs/${seed.pendingJobId}`],
    approveJob: ['POST', `/v1/jobs/${seed.pendingJobId}/approve`, { version: 1 }],
    declineJob: ['POST', `/v1/jobs/${seed.pendingJobId}/decline`, { version: 1, reason: 'Outside our service area' }],
    getShop: ['GET', '/v1/shop'],
    updateShop: ['PATCH', '/v1/shop', { name: `${seed.shop.name} & Sons` }],
    getMe: ['GET', '/v1/me'],
  };
}

/** A case for each route with a function, named as its function is (GetShop for getShop). */
function apiCases(
  api: Record<string, ApiRequest>,
  seed: Seed,
  auth: Record<string, string>,
): Record<string, ColdStartCase> {
  const cases: Record<string, ColdStartCase> = {};
  for (const route of routes.filter((r) => r.handler)) {
    const request = api[route.operationId];
    if (!request) throw new Error(`no cold-start request for ${route.operationId}`);
    const name = route.operationId[0]?.toUpperCase() + route.operationId.slice(1);
    cases[name] = apiCase(name, route, authorizedEvent(route, request, seed, auth));
  }
  return cases;
}

/** The route's request as its function receives it: past the authorizer, with the context it adds. */
function authorizedEvent(route: Route, request: ApiRequest, seed: Seed, auth: Record<string, string>) {
  const [method, path, body] = request;
  // Idempotent routes get a key, so the response is stored (sealed with KMS) as a client's retry-safe request is.
  const headers = { ...auth, ...(route.idempotent ? { 'idempotency-key': 'a1f3c2d4-cold-start' } : {}) };
  const event = httpEvent(method, path, headers, body);
  return { ...event, requestContext: { ...event.requestContext, authorizer: { lambda: seed.authorizer } } };
}

/** A table-backed operation's case, or for one that uses no table, one measured against its same-library reference. */
function apiCase(name: string, route: Route, event: unknown): ColdStartCase {
  if (!FUNCTION_TABLE_PARTS[name]) {
    const sameLibraries = API_WITHOUT_SDK[name];
    if (!sameLibraries) throw new Error(`${name} uses no table: it needs a reference in API_WITHOUT_SDK`);
    return { event, clients: [], check: succeeded, sameLibraries };
  }
  return {
    event,
    // Every table-backed operation; KMS where the route table says the operation seals or opens secrets.
    clients: route.secrets.includes('cipher') ? ['DynamoDB', 'KMS'] : ['DynamoDB'],
    check: succeeded,
    needs: route.secrets.includes('cipher') ? ['KMS GenerateDataKey'] : [],
  };
}

/** The functions invoked by a stream, a queue or a schedule, each with the event its source sends. */
function pipelineCases(seed: Seed): Record<string, ColdStartCase> {
  const deliver: SQSEvent = { Records: [sqsRecord(seed.deliveryMessage, 'ShopCallsApi-Deliveries')] };
  const notify: SQSEvent = {
    Records: [sqsRecord({ shop_id: seed.shop.id, event_id: seed.disabledEventId }, 'ShopCallsApi-OwnerEmails')],
  };
  return {
    Fanout: {
      event: streamEvent(seed),
      clients: ['DynamoDB', 'SQS'],
      check: noFailures,
      needs: ['SQS SendMessageBatch'],
    },
    Notify: { event: notify, clients: ['DynamoDB', 'SES'], check: noFailures, needs: ['SES SendEmail'] },
    Deliver: {
      event: deliver,
      clients: ['DynamoDB', 'SQS', 'KMS', 'Scheduler'],
      check: noFailures,
      needs: ['KMS Decrypt', 'webhook POST'],
    },
    // A finished call as the voice platform sends it: a message on the ingest queue (SQS sets refused calls aside on
    // its DLQ).
    Ingest: {
      event: {
        Records: [
          sqsRecord(
            simulatedCall(seed.shop, { withJob: true, emergency: false, endedAt: new Date() }),
            'ShopCallsApi-Ingest',
          ),
        ],
      },
      clients: ['DynamoDB', 'SQS'],
      check: noFailures,
    },
    Sweep: {
      event: {},
      clients: ['DynamoDB', 'SQS'],
      check: (r) => ((r as { enqueued?: number }).enqueued !== undefined ? null : `no report: ${JSON.stringify(r)}`),
      needs: ['SQS SendMessageBatch'],
    },
  };
}

/** One message as SQS hands it to a function, from the named queue. */
function sqsRecord(body: unknown, queue: string) {
  return {
    messageId: '059f36b4-87a3-44ab-83d2-661975830a7d',
    receiptHandle: 'AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a',
    body: JSON.stringify(body),
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(Date.now()),
      SenderId: 'AIDAIENQZJOLO23YVJ4VO',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:${REGION}:123456789012:${queue}`,
    awsRegion: REGION,
  };
}

/** The seeded event's insert, as the table's stream hands it to the fan-out. */
function streamEvent(seed: Seed): DynamoDBStreamEvent {
  const eventItem = seed.items.find((i) => i.sk?.S === `EVT#${seed.event.id}`);
  const tableArn = `arn:aws:dynamodb:${REGION}:123456789012:table/ShopCallsApi-DataTable`;
  return {
    Records: [
      {
        eventID: 'c4ca4238a0b923820dcc509a6f75849b',
        eventName: 'INSERT',
        eventVersion: '1.1',
        eventSource: 'aws:dynamodb',
        awsRegion: REGION,
        dynamodb: {
          ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
          Keys: { pk: { S: `SHOP#${seed.shop.id}` }, sk: { S: `EVT#${seed.event.id}` } },
          NewImage: eventItem as never,
          SequenceNumber: '111100000000000000000001',
          SizeBytes: 812,
          StreamViewType: 'NEW_AND_OLD_IMAGES',
        },
        eventSourceARN: `${tableArn}/stream/2026-11-20T00:00:00.000`,
      },
    ],
  };
}

/** The portal's own route (lib/constructs/api.ts), outside the /v1 table. */
function portalEvent(): APIGatewayProxyEventV2 {
  const portal = httpEvent('GET', '/portal', {});
  return Object.assign(portal, {
    routeKey: 'GET /portal',
    requestContext: { ...portal.requestContext, routeKey: 'GET /portal' },
  });
}
