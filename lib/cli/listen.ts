import { createServer, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import { webhooks, type WebhookEvent } from '../../client/src/index';
import type { Shop } from '../../shared/domain/shop';
import {
  createEndpoint,
  signingSecrets,
  updateEndpoint,
  type EndpointRecord,
} from '../../shared/domain/webhook-endpoints';
import type { ApiDeps } from '../../shared/wiring/api';
import type { Io } from './run';

export const LISTEN_DESCRIPTION = 'npm run listen';

export interface Listener {
  url: string;
  endpointId: string;
  /** True when an endpoint from an earlier run was found and reused. */
  reused: boolean;
  /**
   * Stops listening and disables the endpoint; `disabled` is false when that write failed (said on
   * the error stream).
   */
  close(): Promise<{ disabled: boolean }>;
}

/** One readable line per event: what happened, to what. */
export function describeEvent(event: WebhookEvent): string {
  const d: Record<string, unknown> = event.data;
  const s = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '–');
  const customer = (d.customer ?? {}) as Record<string, unknown>;
  switch (event.type.split('.')[0]) {
    case 'call':
      return (
        `${s(d.id)} from ${s(d.caller_name)} ${s(d.from_number)}, ${s(d.duration_seconds)} s, ` +
        `outcome ${s(d.outcome)}`
      );
    case 'job':
      return (
        `${s(d.id)} ${s(d.status)} (v${s(d.version)}): ${s(d.service)} for ${s(customer.name)}, ` +
        `${s(d.urgency)}${d.decline_reason ? `, "${s(d.decline_reason)}"` : ''}`
      );
    case 'webhook_endpoint':
      return `${s(d.id ?? d.endpoint_id)} ${s(d.url)}${d.disabled_reason ? ` disabled: ${s(d.disabled_reason)}` : ''}`;
    default:
      return JSON.stringify(d);
  }
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Registers (or reuses) the shop's endpoint for this URL, subscribed to every event type, enabled. */
async function ensureEndpoint(
  deps: ApiDeps,
  shop: Shop,
  url: string,
): Promise<{ endpoint: EndpointRecord; reused: boolean }> {
  const existing = (await deps.endpoints.list(shop.id)).find((e) => e.url === url);
  if (existing) {
    const changes = {
      ...(existing.enabled ? {} : { enabled: true }),
      ...(existing.events.join() === '*' ? {} : { events: ['*'] }),
    };
    if (Object.keys(changes).length > 0) await updateEndpoint(deps, shop.id, existing.id, changes);
    return { endpoint: (await deps.endpoints.get(shop.id, existing.id)) ?? existing, reused: true };
  }
  const created = await createEndpoint(deps, shop.id, { url, events: ['*'], description: LISTEN_DESCRIPTION });
  const endpoint = await deps.endpoints.get(shop.id, created.id);
  if (!endpoint) throw new Error('the new endpoint vanished');
  return { endpoint, reused: false };
}

/**
 * `npm run listen`: a loopback receiver registered as a webhook endpoint of `shop`. Every
 * delivery is verified with the client library's `webhooks.verify` against the endpoint's signing secrets (read
 * from the table, so a reused endpoint needs no copy-paste), acknowledged with 204 and
 * printed; a delivery that fails verification gets 400 and is printed as rejected.
 */
export async function startListener(
  deps: ApiDeps,
  shop: Shop,
  opts: { port: number; host?: string; json?: boolean },
  io: Io,
): Promise<Listener> {
  const host = opts.host ?? '127.0.0.1';
  let secrets: string[] = [];
  let endpoint: EndpointRecord | undefined;
  const seen = new Set<string>();
  const loadSecrets = async () => {
    if (!endpoint) return;
    const fresh = (await deps.endpoints.get(shop.id, endpoint.id)) ?? endpoint;
    secrets = await signingSecrets(deps, fresh, deps.now());
  };
  // Every secret of the endpoint, as a receiver holding all of them would: during a rotation there are several.
  const verify = (raw: string, headers: Record<string, string>) => webhooks.verify(raw, headers, secrets);

  const server = createServer((req, res) => {
    void (async () => {
      const raw = await body(req); // verify the raw bytes, before any parsing
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const event = await verify(raw, headers).catch(async () => {
        await loadSecrets(); // rotated since we started?
        return verify(raw, headers).catch((err: Error) => err);
      });
      if (event instanceof Error) {
        // The message reaches the endpoint's attempt log, so the sender sees why it was refused.
        res.writeHead(400, { 'content-type': 'text/plain' }).end(event.message);
        io.err(`✗ rejected ${headers['webhook-id'] ?? '(no webhook-id)'}: ${event.message}`);
        return;
      }
      res.writeHead(204).end(); // acknowledge at once
      const id = headers['webhook-id'] ?? event.id;
      if (seen.has(id)) return io.out(`· duplicate ${id} (already shown)`);
      seen.add(id);
      io.out(`✓ verified ${event.type} ${event.id} at ${event.timestamp}\n    ${describeEvent(event)}`);
      if (opts.json) io.out(JSON.stringify(event, null, 2));
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end();
      io.err(`✗ ${(err as Error).message}`);
    });
  });
  server.listen(opts.port, host);
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  const url = `http://${host}:${port}/webhooks`;
  try {
    const ensured = await ensureEndpoint(deps, shop, url);
    const endpointId = ensured.endpoint.id;
    endpoint = ensured.endpoint;
    await loadSecrets();
    return {
      url,
      endpointId,
      reused: ensured.reused,
      // Disabled while nobody listens, so retries do not pile up against a closed port (the next listen enables it).
      close: async () => {
        const disabled = await updateEndpoint(deps, shop.id, endpointId, { enabled: false }).then(
          () => true,
          (err: unknown) => (
            io.err(`Could not disable webhook endpoint ${endpointId}: ${(err as Error).message}`),
            false
          ),
        );
        server.closeAllConnections();
        server.close();
        await once(server, 'close').catch(() => undefined);
        return { disabled };
      },
    };
  } catch (err) {
    server.close();
    throw err;
  }
}
