import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { ShopCalls, webhooks } from '../../client/src/index';
import { issueKey, type ApiKeyStore } from '../../shared/domain/api-keys';
import { SCOPES } from '../../shared/domain/scopes';
import { createShop, type ShopDeps } from '../../shared/domain/shop';
import { simulatedCall } from '../cli/simulate';

/** Sends one call, as the voice platform does, and answers the message's id. */
export type CallSender = (call: unknown) => Promise<string>;

/**
 * What the smoke run needs: the API's base URL, the table (to create the shop and key, as the
 * operator CLI does), and the way the voice platform hands over a finished call.
 */
export interface SmokeTarget {
  apiUrl: string;
  deps: ShopDeps & { apiKeys: ApiKeyStore };
  /** The ingest queue (its URL, for the log) and a sender to it. */
  ingest: { queueUrl: string; send: CallSender };
}

/**
 * A sender to the ingest queue at `queueUrl`: one message per call, its body the call's JSON
 * (docs/api.md, Call ingest).
 */
export function queueSender(sqs: SQSClient, queueUrl: string): CallSender {
  return async (call) => {
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(call) }));
    if (!sent.MessageId) throw new SmokeFailure(`the ingest queue ${queueUrl} answered no message id`);
    return sent.MessageId;
  };
}

export interface SmokeOptions {
  /**
   * The endpoint URL: an https receiver the stack can reach. Unset: the smoke run's own
   * receiver on loopback (the local stack only).
   */
  receiverUrl?: string;
  /**
   * Start the smoke run's own receiver on this loopback port even with a `receiverUrl`: a
   * tunnel (cloudflared, ngrok) forwards that public URL here, so the signature is checked too.
   */
  listenPort?: number;
  timeoutMs?: number;
  log?: (line: string) => void;
}

export interface SmokeResult {
  shopId: string;
  callId: string;
  /** The ingest queue's id of the message that carried the call. */
  messageId: string;
  eventId: string;
  /**
   * The receiver's request verified with the endpoint's secret (a receiver started here), or null
   * (a given receiver).
   */
  verifiedSignature: boolean | null;
}

export class SmokeFailure extends Error {}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The client library, as apps use it, that also checks what every answer must carry: a
 * `Request-Id` header (docs/api.md, Conventions). Its errors say the status, code and message.
 */
function apiClient(target: SmokeTarget, key: string): { client: ShopCalls; checkRequestIds: () => void } {
  const withoutId: string[] = [];
  const client = new ShopCalls({
    apiKey: key,
    baseUrl: target.apiUrl,
    fetch: async (request) => {
      const answer = await fetch(request);
      if (!answer.headers.get('request-id')?.startsWith('req_'))
        withoutId.push(`${request.method} ${new URL(request.url).pathname}`);
      return answer;
    },
  });
  const checkRequestIds = () => {
    if (withoutId.length > 0) throw new SmokeFailure(`${withoutId.join(', ')} answered without a Request-Id header`);
  };
  return { client, checkRequestIds };
}

/** A loopback receiver that keeps every request's raw body and headers. */
async function startLoopbackReceiver(
  port: number,
): Promise<{ url: string; requests: { raw: string; headers: Record<string, string> }[]; server: Server }> {
  const requests: { raw: string; headers: Record<string, string> }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        raw: Buffer.concat(chunks).toString('utf8'),
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
      });
      res.writeHead(204).end();
    });
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  return { url: `http://127.0.0.1:${bound}/smoke`, requests, server };
}

/** Polls `check` every 500 ms until it answers a value, or fails with `what` at the deadline. */
async function until<T>(deadline: number, what: () => string, check: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new SmokeFailure(what());
    await sleep(500);
  }
}

/**
 * The post-deploy check, end to end: a new shop and test key, `GET /v1/me`, an endpoint on a
 * receiver, a simulated finished call sent to the ingest queue as the voice platform sends it,
 * the call in `GET /v1/calls`, and its `call.completed` delivered: the delivery succeeded (the
 * event's delivery row) and, with a receiver started here, its signature verifies with the
 * endpoint's secret. Cleans up its key and endpoint.
 */
export async function runSmoke(target: SmokeTarget, options: SmokeOptions = {}): Promise<SmokeResult> {
  const log = options.log ?? (() => undefined);
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const shop = await createShop(target.deps, {
    name: `Smoke test ${new Date().toISOString()}`,
    owner_email: 'smoke-test@example.com',
    timezone: 'America/New_York',
  });
  const { record, key } = await issueKey(target.deps.apiKeys, {
    shopId: shop.id,
    scopes: [...SCOPES],
    write: true,
    mode: 'test',
  });
  log(`✓ shop ${shop.id}, key ${record.id}`);
  const receiver =
    options.receiverUrl && options.listenPort === undefined
      ? null
      : await startLoopbackReceiver(options.listenPort ?? 0);
  const { client, checkRequestIds } = apiClient(target, key);
  try {
    const me = await client.me.retrieve();
    if (me.shop.id !== shop.id) throw new SmokeFailure(`/v1/me names another shop: ${JSON.stringify(me.shop)}`);
    log('✓ GET /v1/me');

    const url = options.receiverUrl ?? (receiver as { url: string }).url;
    const endpoint = await client.webhookEndpoints.create({
      url,
      events: ['call.completed'],
      description: 'smoke test',
    });
    log(`✓ endpoint ${endpoint.id} → ${url}`);

    // The shop is new: the call the queue's consumer records is the only one in its list.
    const call = simulatedCall(shop, { withJob: false, emergency: false, endedAt: new Date() });
    const messageId = await target.ingest.send(call);
    log(`✓ call ${call.external_id} sent to the ingest queue ${target.ingest.queueUrl} (message ${messageId})`);
    const callId = await until(
      deadline,
      () =>
        `the call sent as message ${messageId} did not appear in GET /v1/calls in time: is the ` +
        `ingest queue consumed? (its dead-letter queue holds refused calls)`,
      async () => {
        const calls = await client.calls.list().toArray({ limit: 100 });
        return calls.find((c) => c.from_number === call.from_number && c.started_at === call.started_at)?.id;
      },
    );
    log(`✓ call ${callId} recorded from the queue`);

    // The delivery's row is the truth: wait for it to succeed.
    let eventId = '';
    await until(
      deadline,
      () => `no succeeded delivery of call.completed for ${callId} in time${eventId ? ` (event ${eventId})` : ''}`,
      async () => {
        if (!eventId) {
          const events = await client.events.list({ type: 'call.completed' }).toArray({ limit: 100 });
          eventId = events.find((e) => e.type === 'call.completed' && e.data.id === callId)?.id ?? '';
        }
        if (!eventId) return undefined;
        const event = await client.events.retrieve(eventId);
        return event.deliveries.some((d) => d.status === 'succeeded') ? true : undefined;
      },
    );
    log(`✓ event ${eventId} delivered`);

    let verifiedSignature: boolean | null = null;
    if (receiver) {
      const request = receiver.requests.find((r) => r.headers['webhook-id'] === eventId);
      if (!request) throw new SmokeFailure(`the receiver got no request with webhook-id ${eventId}`);
      const verified = await webhooks.verify(request.raw, request.headers, endpoint.secret);
      const about = verified.type === 'call.completed' ? verified.data.id : undefined;
      if (about !== callId)
        throw new SmokeFailure(`the receiver got ${verified.type} for ${about ?? 'another object'}`);
      verifiedSignature = true;
      log('✓ signature verified with the endpoint secret');
    }
    await client.webhookEndpoints.update(endpoint.id, { enabled: false });
    checkRequestIds();
    return { shopId: shop.id, callId, messageId, eventId, verifiedSignature };
  } finally {
    await target.deps.apiKeys.revoke(record.id, new Date().toISOString());
    if (receiver) {
      receiver.server.closeAllConnections();
      receiver.server.close();
    }
  }
}
