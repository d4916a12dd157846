import { createHash } from 'node:crypto';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A flaky network between the stack and DynamoDB Local: an HTTP proxy that, per request,
 * forwards it untouched, or forwards it and then drops the answer (the change is committed,
 * the caller never hears so), or resets the connection before forwarding, or delays it.
 * Decisions come from a seeded generator, so a failing run can be replayed.
 */
export type Fault = 'none' | 'drop-after-commit' | 'reset-before' | 'delay';

export interface FaultProxy {
  endpoint: string;
  /** Picks each request's fault from its DynamoDB operation (`X-Amz-Target` without its prefix). */
  decide: (operation: string) => Fault;
  /**
   * At most this many faults in a row for the same request (the SDK resends a retry byte for
   * byte): a flaky network, not an outage. Unbounded by default.
   */
  maxFaultsPerRequest: number;
  /** Requests seen, by fault. */
  counts: Record<Fault, number>;
  stop(): Promise<void>;
}

/** A small deterministic generator (mulberry32): the same seed gives the same faults. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function startFaultProxy(upstream: string): Promise<FaultProxy> {
  const target = new URL(upstream);
  const proxy: FaultProxy = {
    endpoint: '',
    decide: () => 'none',
    maxFaultsPerRequest: Number.POSITIVE_INFINITY,
    counts: { none: 0, 'drop-after-commit': 0, 'reset-before': 0, delay: 0 },
    stop: async () => undefined,
  };

  const forward = (req: IncomingMessage, body: Buffer, res: ServerResponse, drop: boolean) => {
    const out = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          // The store has done what was asked; the caller is cut off before it learns so.
          if (drop) {
            res.socket?.destroy();
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(Buffer.concat(chunks));
        });
      },
    );
    out.on('error', () => res.socket?.destroy());
    out.end(body);
  };

  /** Faults in a row, by request body. */
  const faultsOf = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const operation =
        String(req.headers['x-amz-target'] ?? '')
          .split('.')
          .pop() ?? '';
      const body = Buffer.concat(chunks);
      const id = createHash('sha256').update(body).digest('base64');
      const faulted = faultsOf.get(id) ?? 0;
      const fault = faulted < proxy.maxFaultsPerRequest ? proxy.decide(operation) : 'none';
      if (fault === 'none' || fault === 'delay') faultsOf.delete(id);
      else faultsOf.set(id, faulted + 1);
      proxy.counts[fault]++;
      if (fault === 'reset-before') return void res.socket?.destroy();
      if (fault === 'delay') return void setTimeout(() => forward(req, body, res, false), 50);
      forward(req, body, res, fault === 'drop-after-commit');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.stop = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return proxy;
}
