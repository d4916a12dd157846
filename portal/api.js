import { formatTime } from './time.js';

/**
 * The page's only way out: same-origin calls to the public /v1 API with the credential it was
 * given (a portal link's token, or a pasted key). The credential lives in this module's
 * variable only: never storage, never a URL, never anything but the Authorization header.
 */
let credential = null;
let onSession = () => {};

/** Subscribable event types and delivery statuses (test/unit/portal.test.ts keeps them equal to the API's). */
export const EVENT_TYPES = [
  'call.completed',
  'job.created',
  'job.approved',
  'job.declined',
  'webhook_endpoint.disabled',
];
export const DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'failed', 'cancelled'];

export const setCredential = (value) => {
  credential = value;
};
export const hasCredential = () => credential !== null;
/** Called with what the API says about a portal session on each answer to its token. */
export const watchSession = (fn) => {
  onSession = fn;
};

export class ApiError extends Error {
  constructor(status, message, code) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** An ISO instant inside an API message, said in the reader's own time, as every other time on the page. */
const localTimes = (text) => text.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, formatTime);

/** What went wrong, as a sentence for a person: the API's own message when it has one, never a network code. */
function sentenceFor(status, json, res) {
  const message = json?.error?.message;
  if (status === 429)
    return `Too many requests just now. Wait ${res.headers.get('retry-after') ?? 'a few'} seconds and try again.`;
  if (status >= 500)
    return `Something went wrong on our side. Try again in a minute.${json?.error?.request_id ? ` (Reference: ${json.error.request_id})` : ''}`;
  if (message) return localTimes(message);
  // API Gateway refuses an address with too many failed sign-ins with a bare 403.
  if (status === 403) return 'Too many failed sign-ins from this network. Wait a minute and try again.';
  return `The service answered with an error (${status}). Try again, or ask whoever sent you here.`;
}

export async function api(method, path, body, { idempotent = false } = {}) {
  if (!path.startsWith('/v1/')) throw new Error('the portal calls /v1 only');
  if (credential === null) throw new ApiError(401, 'Open your portal link again, or paste an API key.', 'no_key');
  const headers = { authorization: `Bearer ${credential}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  // One key per click: a request the network repeats is applied once.
  if (idempotent) headers['idempotency-key'] = crypto.randomUUID();
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch {
    throw new ApiError(0, 'Could not reach the service. Check your internet connection and try again.', 'network');
  }
  const json = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, sentenceFor(res.status, json, res), json?.error?.code);
  const sessionId = res.headers.get('portal-session-id');
  if (sessionId) {
    onSession({
      id: sessionId,
      expiresAt: res.headers.get('portal-session-expires-at'),
      readOnly: res.headers.get('portal-session-read-only') === 'true',
      shopName: decodeURIComponent(res.headers.get('portal-session-shop-name') ?? ''),
    });
  }
  return json;
}

export const q = (params) => {
  const s = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== ''));
  const text = s.toString();
  return text ? `?${text}` : '';
};
