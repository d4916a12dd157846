import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../lib/local/stack';
import type { DemoSeed } from '../../lib/local/seed';
import type { CallIngest } from '../../shared/domain/call-ingest-schema';

export interface BenchStack {
  stack: LocalStack;
  demo: DemoSeed;
  /** One keep-alive API call with the demo write key. */
  api(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; json: unknown }>;
  close(): Promise<void>;
}

/**
 * The whole local stack (`npm start`) in this process, on a fresh in-memory DynamoDB Local,
 * with logs at ERROR so logging does not weigh on the figures.
 */
export async function startBenchStack(options: Partial<LocalStackOptions> = {}): Promise<BenchStack> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const stack = await startLocalStack({
    port: 0,
    seed: true,
    tableName: 'bench',
    secretsKeyFile: join(dir, 'secrets.key'),
    outboxDir: join(dir, 'outbox'),
    // The benches measure the service, not its per-key limit (docs/rate-limits.md).
    rateLimits: { test: 1_000_000, live: 1_000_000, authFailures: 1_000_000 },
    ...options,
  });
  if (!stack.demo) throw new Error('the bench stack did not seed its demo shop');
  const demo = stack.demo;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const base = new URL(stack.url);
  const api: BenchStack['api'] = (method, path, body, key = demo.writeKey.key) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(
        {
          host: base.hostname,
          port: base.port,
          path,
          method,
          agent,
          headers: {
            authorization: `Bearer ${key}`,
            ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, json: text ? (JSON.parse(text) as unknown) : null });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  return {
    stack,
    demo,
    api,
    close: async () => {
      agent.destroy();
      await stack.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let counter = 0;

/** A finished call as the voice platform reports it: a short transcript, a summary, and optionally one job. */
export function callIngest(shopId: string, withJob: boolean): CallIngest {
  const n = ++counter;
  const started = new Date(Date.now() - 5 * 60_000);
  const ended = new Date(started.getTime() + 3 * 60_000);
  return {
    shop_id: shopId,
    external_id: `bench-${process.pid}-${n}`,
    status: 'completed',
    from_number: '+15551230000',
    to_number: '+15559870000',
    caller_name: 'Pat Jones',
    started_at: started.toISOString(),
    ended_at: ended.toISOString(),
    transcript: [
      { speaker: 'agent', text: 'Thanks for calling Demo Plumbing, how can I help?', offset_ms: 0 },
      { speaker: 'caller', text: 'My kitchen sink is leaking under the cabinet.', offset_ms: 4200 },
    ],
    summary: {
      summary: 'Caller reports a leaking kitchen sink and wants a visit this week.',
      outcome: withJob ? 'job_created' : 'message_taken',
      details: {
        caller_name: 'Pat Jones',
        callback_number: '+15551230000',
        service_requested: 'Leak repair',
        address: '12 Elm St',
        urgency: 'routine',
      },
      usage: { credits: 1, billable_seconds: 180 },
    },
    jobs: withJob
      ? [
          {
            customer: { name: 'Pat Jones', phone: '+15551230000', address: '12 Elm St' },
            service: 'Leak repair',
            description: 'Kitchen sink leaking under the cabinet.',
            urgency: 'routine',
            requested_window: null,
          },
        ]
      : [],
  };
}
