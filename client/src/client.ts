/**
 * The client: one object per group of operations, named as stripe-node names them
 * (`calls.list`, `jobs.approve`, `webhookEndpoints.rotateSecret`, …), over one transport.
 */
import { Http } from './http.js';
import { type Backoff, DEFAULT_BACKOFF } from './retry.js';
import { Calls } from './resources/calls.js';
import { Events, EventTypes } from './resources/events.js';
import { Jobs } from './resources/jobs.js';
import { PortalSessions } from './resources/portal-sessions.js';
import { Me, ShopResource } from './resources/shop.js';
import { WebhookEndpoints } from './resources/webhook-endpoints.js';
import { type Sleep, sleep as realSleep } from './transport.js';
import { webhooks } from './webhooks.js';

export interface ShopCallsOptions {
  /** An API key (`sk_test_…`, `sk_live_…`) or a portal session's token (`pst_…`). */
  apiKey: string;
  /** Where the API is served, for example `https://api.example.com` or `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** Retries after the first attempt, for reads and for writes with an Idempotency-Key. Default 2. */
  maxRetries?: number;
  /** Per attempt, the answer's body included. Default 30 000. */
  timeoutMs?: number;
  /** Replaces `globalThis.fetch` (a proxy agent, a test double); it receives a `Request`. */
  fetch?: (request: Request) => Promise<Response>;
  /** The waits between retries: `{ baseMs: 500, capMs: 8000, maxRetryAfterMs: 60000 }` by default. */
  backoff?: Partial<Backoff>;
  /** Replaces the timer behind every wait (retries, feed polls), so tests run without waiting. */
  sleep?: Sleep;
  /** Replaces Math.random in the retry jitter, so tests know each wait. */
  random?: () => number;
}

export class ShopCalls {
  readonly calls: Calls;
  readonly jobs: Jobs;
  readonly shop: ShopResource;
  readonly me: Me;
  readonly webhookEndpoints: WebhookEndpoints;
  readonly events: Events;
  readonly eventTypes: EventTypes;
  readonly portalSessions: PortalSessions;
  /** Verification and signing of deliveries; also exported on its own, for receivers without a key. */
  readonly webhooks = webhooks;

  constructor(options: ShopCallsOptions) {
    const { apiKey, baseUrl, maxRetries = 2, timeoutMs = 30_000 } = options;
    if (typeof apiKey !== 'string' || apiKey.trim() === '') throw new TypeError('ShopCalls needs an apiKey');
    if (typeof baseUrl !== 'string' || !URL.canParse(baseUrl)) {
      throw new TypeError(
        `ShopCalls needs an absolute baseUrl such as https://api.example.com, not ${String(baseUrl)}`,
      );
    }
    if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new RangeError('maxRetries must be an integer >= 0');
    if (!(timeoutMs > 0)) throw new RangeError('timeoutMs must be a positive number of milliseconds');
    const userFetch = options.fetch;
    const http = new Http(
      {
        // Called as a function of its own: a browser's fetch refuses any `this` but the window.
        fetch: userFetch ? (request) => userFetch(request) : (request) => globalThis.fetch(request),
        maxRetries,
        timeoutMs,
        backoff: { ...DEFAULT_BACKOFF, ...options.backoff },
        sleep: options.sleep ?? realSleep,
        random: options.random ?? Math.random,
      },
      baseUrl,
      apiKey,
    );
    this.calls = new Calls(http);
    this.jobs = new Jobs(http);
    this.shop = new ShopResource(http);
    this.me = new Me(http);
    this.webhookEndpoints = new WebhookEndpoints(http);
    this.events = new Events(http);
    this.eventTypes = new EventTypes(http);
    this.portalSessions = new PortalSessions(http);
  }
}
