import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { Webhook } from 'standardwebhooks';

export interface Received {
  at: number;
  headers: IncomingHttpHeaders;
  raw: string;
  /** Which of the given secrets verified this request. */
  verifiedWith: string[];
  event: { id: string; object: string; type: string; timestamp: string; data: Record<string, unknown> };
}

/**
 * A real HTTP receiver that verifies every request with standardwebhooks. `respond`
 * decides the answer per request (default 204).
 */
const open = new Set<{ close(): Promise<void> }>();

/** Closes every receiver a test left open (a failed assertion skips its own close). */
export async function closeReceivers(): Promise<void> {
  await Promise.all([...open].map((r) => r.close()));
}

export async function startReceiver(
  secrets: () => string[],
  respond: (n: number, res: ServerResponse) => void = (_n, res) => res.writeHead(204).end(),
) {
  const received: Received[] = [];
  const rejected: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const verifiedWith = secrets().filter((s) => {
        try {
          new Webhook(s).verify(raw, headers);
          return true;
        } catch {
          return false;
        }
      });
      if (verifiedWith.length === 0) {
        rejected.push(raw);
        res.writeHead(401).end();
        return;
      }
      received.push({
        at: Date.now(),
        headers: req.headers,
        raw,
        verifiedWith,
        event: JSON.parse(raw) as Received['event'],
      });
      respond(received.length, res);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  const handle = {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    rejected,
    close: async () => {
      if (!open.delete(handle)) return;
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  open.add(handle);
  return handle;
}

/**
 * What a receiver that follows Standard Webhooks processes: the first receipt of each `webhook-id`, in the order
 * they came. Delivery is at least once (docs/api.md, Durability; the local stack in chaos mode duplicates), so a
 * test that counts what arrived counts these, not requests.
 */
export function firstOfEach(received: Received[]): Received[] {
  const seen = new Set<string>();
  return received.filter((r) => {
    const id = String(r.headers['webhook-id']);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/**
 * The requests that reached a receiver for `attempts` recorded attempts: exactly that many from a calm local stack;
 * at least that many in chaos mode, where a message handled twice at once may send one attempt twice (docs/api.md,
 * Durability: the attempt is recorded once).
 */
export function expectRequests(received: Received[], attempts: number, stack: { chaos?: unknown }): void {
  if (stack.chaos) expect(received.length).toBeGreaterThanOrEqual(attempts);
  else expect(received).toHaveLength(attempts);
}

/** `waitFor` for a probe that asks the API or the table. */
export async function eventually<T>(
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 10000,
  label = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function waitFor<T>(
  probe: () => T | undefined | false,
  timeoutMs = 10000,
  label = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
