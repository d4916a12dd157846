import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { Webhook } from 'standardwebhooks';

export interface BenchReceiver {
  url: string;
  /**
   * Set the signing secret once the endpoint exists; until then nothing verifies. With
   * `path` (under `url`, e.g. '/3'), requests to that path verify with this secret instead:
   * one receiver serves several endpoints, each with its own secret.
   */
  setSecret(secret: string, path?: string): void;
  /** Called with the event id and `performance.now()` after a request verified. */
  onVerified: (eventId: string, at: number) => void;
  verified: number;
  rejected: number;
  close(): Promise<void>;
}

const HOOK_PATH = '/hook';

/**
 * A webhook receiver as a careful customer writes one: verifies every request with
 * standardwebhooks on the raw body, then answers 204. `verify: false` makes a bare 204
 * server for the POST-only baselines.
 */
export async function startReceiver(opts: { verify: boolean }): Promise<BenchReceiver> {
  let verifier: Webhook | undefined;
  const byPath = new Map<string, Webhook>();
  const receiver: BenchReceiver = {
    url: '',
    setSecret: (secret, path) => {
      if (path === undefined) verifier = new Webhook(secret);
      else byPath.set(`${HOOK_PATH}${path}`, new Webhook(secret));
    },
    onVerified: () => undefined,
    verified: 0,
    rejected: 0,
    close: async () => undefined,
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (!opts.verify) {
        res.writeHead(204).end();
        return;
      }
      const raw = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      let event: { id: string };
      try {
        const using = byPath.get(req.url ?? '') ?? verifier;
        if (!using) throw new Error('no secret yet');
        event = using.verify(raw, headers) as { id: string };
      } catch {
        receiver.rejected++;
        res.writeHead(400).end();
        return;
      }
      const at = performance.now();
      receiver.verified++;
      res.writeHead(204).end();
      receiver.onVerified(event.id, at);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  receiver.url = `http://127.0.0.1:${(server.address() as { port: number }).port}${HOOK_PATH}`;
  receiver.close = async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  };
  return receiver;
}
