import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { issueKey, type ApiKeyStore } from '../../shared/domain/api-keys';
import { ingestCall, type CallDeps } from '../../shared/domain/calls';
import { SCOPES } from '../../shared/domain/scopes';
import { createShop } from '../../shared/domain/shop';
import { simulatedCall } from '../cli/simulate';

/** What the smoke run needs: the API's base URL, and the table (to create the shop and key, and record the call as ingest does). */
export interface SmokeTarget {
  apiUrl: string;
  deps: CallDeps & { apiKeys: ApiKeyStore };
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
  eventId: string;
  /** The receiver's request verified with the endpoint's secret (a receiver started here), or null (a given receiver). */
  verifiedSignature: boolean | null;
}

export class SmokeFailure extends Error {}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function api(target: SmokeTarget, key: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${target.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new SmokeFailure(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  if (!res.headers.get('request-id')?.startsWith('req_')) throw new SmokeFailure(`${method} ${path} has no Request-Id header`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** A loopback receiver that keeps every request's raw body and headers. */
async function startLoopbackReceiver(port: number): Promise<{ url: string; requests: { raw: string; headers: Record<string, string> }[]; server: Server }> {
  const requests: { raw: string; headers: Record<string, string> }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ raw: Buffer.concat(chunks).toString('utf8'), headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])) });
      res.writeHead(204).end();
    });
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  return { url: `http://127.0.0.1:${bound}/smoke`, requests, server };
}

/**
 * The post-deploy check, end to end: a new shop and test key, `GET /v1/me`, an endpoint on a
 * receiver, a simulated finished call recorded as ingest records it, and its `call.completed`
 * delivered: the delivery succeeded (the event's delivery row) and, with a receiver started
 * here, its signature verifies with the endpoint's secret. Cleans up its key and endpoint.
 */
export async function runSmoke(target: SmokeTarget, options: SmokeOptions = {}): Promise<SmokeResult> {
  const log = options.log ?? (() => undefined);
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const shop = await createShop(target.deps, { name: `Smoke test ${new Date().toISOString()}`, owner_email: 'smoke-test@example.com', timezone: 'America/New_York' });
  const { record, key } = await issueKey(target.deps.apiKeys, { shopId: shop.id, scopes: [...SCOPES], write: true, mode: 'test' });
  log(`✓ shop ${shop.id}, key ${record.id}`);
  const receiver = options.receiverUrl && options.listenPort === undefined ? null : await startLoopbackReceiver(options.listenPort ?? 0);
  try {
    const me = await api(target, key, 'GET', '/v1/me');
    if ((me.shop as { id?: string } | undefined)?.id !== shop.id) throw new SmokeFailure(`/v1/me names another shop: ${JSON.stringify(me.shop)}`);
    log('✓ GET /v1/me');

    const url = options.receiverUrl ?? (receiver as { url: string }).url;
    const endpoint = await api(target, key, 'POST', '/v1/webhook-endpoints', { url, events: ['call.completed'], description: 'smoke test' });
    const secret = String(endpoint.secret);
    log(`✓ endpoint ${String(endpoint.id)} → ${url}`);

    const ingested = await ingestCall(target.deps, simulatedCall(shop, { withJob: false, emergency: false, endedAt: new Date() }));
    log(`✓ call ${ingested.call_id} recorded`);

    // The delivery's row is the truth: wait for it to succeed.
    let eventId = '';
    for (;;) {
      if (Date.now() > deadline) throw new SmokeFailure(`no succeeded delivery of call.completed for ${ingested.call_id} in time${eventId ? ` (event ${eventId})` : ''}`);
      if (!eventId) {
        const events = await api(target, key, 'GET', '/v1/events?type=call.completed');
        eventId = String((events.data as { id: string }[])[0]?.id ?? '');
      }
      if (eventId) {
        const event = await api(target, key, 'GET', `/v1/events/${eventId}`);
        const deliveries = event.deliveries as { status: string; last_response_status: number | null }[];
        if (deliveries.some((d) => d.status === 'succeeded')) break;
      }
      await sleep(500);
    }
    log(`✓ event ${eventId} delivered`);

    let verifiedSignature: boolean | null = null;
    if (receiver) {
      const request = receiver.requests.find((r) => r.headers['webhook-id'] === eventId);
      if (!request) throw new SmokeFailure(`the receiver got no request with webhook-id ${eventId}`);
      const verified = new Webhook(secret).verify(request.raw, request.headers) as { id: string; type: string; data: { id: string } };
      if (verified.type !== 'call.completed' || verified.data.id !== ingested.call_id) throw new SmokeFailure(`the receiver got ${verified.type} for ${verified.data.id}`);
      verifiedSignature = true;
      log('✓ signature verified with the endpoint secret');
    }
    await api(target, key, 'PATCH', `/v1/webhook-endpoints/${String(endpoint.id)}`, { enabled: false });
    return { shopId: shop.id, eventId, verifiedSignature };
  } finally {
    await target.deps.apiKeys.revoke(record.id, new Date().toISOString());
    if (receiver) {
      receiver.server.closeAllConnections();
      receiver.server.close();
    }
  }
}
