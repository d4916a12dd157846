/**
 * The page's only way out: same-origin calls to the public /v1 API with the key pasted by the
 * user. The key lives in this module's variable only (never storage, never a URL).
 */
let key = null;

/** Subscribable event types and delivery statuses (test/unit/portal.test.ts keeps them equal to the API's). */
export const EVENT_TYPES = ['call.completed', 'job.created', 'job.approved', 'job.declined', 'webhook_endpoint.disabled'];
export const DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'failed', 'cancelled'];

export const setKey = (value) => {
  key = value;
};

export class ApiError extends Error {
  constructor(status, message, code) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export async function api(method, path, body, { idempotent = false } = {}) {
  if (!path.startsWith('/v1/')) throw new Error('the portal calls /v1 only');
  if (key === null) throw new ApiError(401, 'Paste an API key first.', 'no_key');
  const headers = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  // One key per click: a request the network repeats is applied once.
  if (idempotent) headers['idempotency-key'] = crypto.randomUUID();
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store', credentials: 'omit' });
  const json = await res.json().catch(() => null);
  // API Gateway's authorizer answers a refused key with a bare 403 (no contract error body).
  const fallback = res.status === 401 || res.status === 403 ? 'The API refused this key.' : `The API answered HTTP ${res.status}.`;
  if (!res.ok) throw new ApiError(res.status, json?.error?.message ?? fallback, json?.error?.code);
  return json;
}

export const q = (params) => {
  const s = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== ''));
  const text = s.toString();
  return text ? `?${text}` : '';
};
