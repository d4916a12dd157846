/**
 * Delivery throughput of one consumer process (bin/consumer.ts: the deliver handler behind
 * the local SQS event source, batches of 10, 4 batches at a time) to a local receiver that
 * verifies every signature, beside the floor measured in the same run: a loop doing only
 * what each delivery must do (one keep-alive signed POST and the delivery row's update) at
 * the same concurrency, and, for scale, a bare POST loop.
 *
 *   npm run bench:throughput         (BENCH_DELIVERIES=2000, BENCH_CONCURRENCY=40)
 */
import './lib/quiet';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { once } from 'node:events';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { newDelivery, messageOf, type DeliveryRecord } from '../shared/domain/deliveries';
import { newEvent } from '../shared/domain/events';
import { createShop } from '../shared/domain/shop';
import { createEndpoint } from '../shared/domain/webhook-endpoints';
import { SqsDeliveryQueue } from '../shared/aws/sqs-queue';
import { newId } from '../shared/ids';
import { DynamoDeliveryStore } from '../shared/store/deliveries';
import { eventItem } from '../shared/store/events';
import { httpSender } from '../shared/webhooks/sender';
import { signedHeaders } from '../shared/webhooks/signer';
import { startPipelineEnv } from './lib/pipeline-env';
import { startReceiver } from './lib/receiver';
import { printTable, setting, sleep, verdict } from './lib/stats';

const N = setting('BENCH_DELIVERIES', 2000);
const BATCH = 10;
const BATCHES_IN_FLIGHT = 4;
const CONCURRENCY = BATCH * BATCHES_IN_FLIGHT;
const BARE_SECONDS = 3;

const env = await startPipelineEnv();
const receiver = await startReceiver({ verify: true });
const bare = await startReceiver({ verify: false });
try {
  const deps = env.deps;
  const shop = await createShop(deps, { name: 'Throughput Shop', owner_email: 'tp@bench.test' });
  const endpoint = await createEndpoint(deps, shop.id, { url: receiver.url, events: ['call.completed'], description: null } as never);
  const secret = (endpoint as { secret: string }).secret;
  receiver.setSecret(secret);
  const endpointId = (endpoint as { id: string }).id;

  // N events with one delivery row each for the consumer, N more rows for the floor loop.
  const now = new Date();
  const rows: DeliveryRecord[] = [];
  const events = [];
  for (let i = 0; i < 2 * N; i++) {
    const event = newEvent(shop.id, 'call.completed', { id: `call_${i}`, object: 'call' }, now);
    events.push(event);
    rows.push(newDelivery(event, endpointId, newId('dlv', now.getTime()), 'fanout', now));
  }
  for (let i = 0; i < events.length; i += 25) {
    await deps.db.doc.send(new BatchWriteCommand({ RequestItems: { [deps.db.tableName]: events.slice(i, i + 25).map((e) => ({ PutRequest: { Item: eventItem(e) } })) } }));
  }
  const deliveries = new DynamoDeliveryStore(deps.db);
  await deliveries.createAll(rows);
  await new SqsDeliveryQueue(env.queues.client, env.queues.queueUrl).send(rows.slice(0, N).map((d) => messageOf(d)));

  const consumer = await runConsumer(N, env.env);
  const floor = await floorLoop(rows.slice(N), deliveries, receiver.url, secret);
  const bareRate = await barePosts(bare.url);
  if (receiver.rejected > 0) throw new Error(`${receiver.rejected} requests failed verification`);

  printTable(`Delivery throughput: one consumer process, batches of ${BATCH}, ${BATCHES_IN_FLIGHT} in flight (${CONCURRENCY} deliveries at once)`, ['figure', 'deliveries/s', 'vs floor', 'target', 'result'], [
    ['floor: signed POST + delivery row update, same concurrency', floor.toFixed(0), '1.00×', '', ''],
    [`consumer (${N} deliveries)`, consumer.toFixed(0), `${(consumer / floor).toFixed(2)}×`, '≥ 0.5×', verdict(consumer >= 0.5 * floor)],
    [`bare POST loop, no verification (for scale, ${BARE_SECONDS} s)`, bareRate.toFixed(0), `${(bareRate / floor).toFixed(2)}×`, '', ''],
  ]);
} finally {
  await receiver.close();
  await bare.close();
  await env.close();
}

/** Starts bin/consumer.ts against the queue and times the first to the last verified receipt. */
async function runConsumer(expected: number, consumerEnv: Record<string, string>): Promise<number> {
  let first = 0;
  let last = 0;
  let count = 0;
  receiver.onVerified = (_id, at) => {
    if (count === 0) first = at;
    count++;
    last = at;
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/consumer.ts'], { env: { ...process.env, ...consumerEnv }, stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    const deadline = Date.now() + 300_000;
    while (count < expected && Date.now() < deadline && child.exitCode === null) await sleep(20);
    if (count < expected) throw new Error(`the consumer delivered ${count} of ${expected}`);
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await once(child, 'exit');
  }
  return ((expected - 1) * 1000) / (last - first);
}

/** What each delivery must do, nothing else: sign and POST over keep-alive, then record the attempt on its row. */
async function floorLoop(rows: DeliveryRecord[], store: DynamoDeliveryStore, url: string, secret: string): Promise<number> {
  const sender = httpSender({ allowInsecureLocal: true }, 10_000);
  const target = new URL(url);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < rows.length; i = next++) {
      const row = rows[i] as DeliveryRecord;
      const body = JSON.stringify({ id: row.event_id, object: 'event', type: 'call.completed', data: {} });
      const at = new Date();
      const sent = await sender.post(target, signedHeaders(row.event_id, body, [secret], at), body);
      await store.recordAttempt(row, {
        status: 'succeeded',
        attempts: 1,
        last_attempt_at: at.toISOString(),
        next_attempt_at: null,
      sweep_at: null,
        last_response_status: sent.status,
        last_error: null,
        entry: { attempt: 1, at: at.toISOString(), status: sent.status, duration_ms: sent.durationMs, error: null, response_snippet: null },
      });
    }
  };
  const t = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return (rows.length * 1000) / (performance.now() - t);
}

/** Keep-alive POSTs to a receiver that answers 204 without verifying, same concurrency. */
async function barePosts(url: string): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const body = JSON.stringify({ hello: 'world' });
  const stopAt = performance.now() + BARE_SECONDS * 1000;
  let done = 0;
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
  const t = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < stopAt) {
        await post();
        done++;
      }
    }),
  );
  agent.destroy();
  return (done * 1000) / (performance.now() - t);
}
