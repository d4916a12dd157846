import type { DynamoDBBatchResponse, DynamoDBStreamEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { makeHandler as makeDeliver } from '../functions/deliver';
import { makeHandler as makeFanout } from '../functions/fanout';
import { makeHandler as makeSweep } from '../functions/sweep';
import { lambdaContext } from '../lib/local/lambda-events';
import { invoke } from '../lib/local/invocations';
import { configFromEnv, type Config } from '../shared/config';
import type { SqsDeliveryQueue } from '../shared/delivery/aws/sqs-queue';
import { DynamoDeliveryStore } from '../shared/delivery/dynamo/deliveries';
import type { NotificationQueue } from '../shared/domain/notifications';
import { apiDeps } from '../shared/wiring/api';
import { dynamoOf } from '../shared/wiring/clients';
import { deliverDeps, fanoutDeps, notifyDeps, sweepDeps } from '../shared/wiring/pipeline';
import { DynamoEndpointStore } from '../shared/store/webhook-endpoints';
import type { FaultRates } from './faults';
import { QueueEventSource, SimDeadLetters, SimQueue, SimScheduler } from './queue';
import { Receivers } from './receivers';
import type { Steps } from './steps';
import { StreamEventSource } from './stream';
import { gateTable, type StreamReader } from './table-stream';

/** Owner emails of disabled endpoints: kept, not sent (what the notify function would read). */
class SimNotifications implements NotificationQueue {
  readonly sent: { shop_id: string; event_id: string }[] = [];
  constructor(private readonly steps: Steps) {}
  async send(message: { shop_id: string; event_id: string }): Promise<void> {
    await this.steps.gate(`notify ${message.event_id}`);
    this.sent.push(message);
  }
}

export const SIM_TIMEOUT_MS = 10_000;

/** The engine's configuration as the stack sets it, on a fresh table of the run's DynamoDB Local. */
export function simConfig(endpoint: string, tableName: string, env: NodeJS.ProcessEnv): Config {
  return configFromEnv({
    ...env,
    DYNAMODB_ENDPOINT: endpoint,
    TABLE_NAME: tableName,
    WEBHOOK_ALLOW_INSECURE_LOCAL: 'true',
    DELIVERY_TIMEOUT_MS: String(SIM_TIMEOUT_MS),
  });
}

/**
 * One run's world: the real handlers (fan-out, consumer, sweeper, every API operation) wired
 * to the run's table as Lambda wires them, with the AWS side played by the simulator: its
 * queue, scheduler and dead-letter queue, its stream and queue event sources, its receivers.
 */
export async function buildWorld(
  steps: Steps,
  opts: { endpoint: string; tableName: string; reader: StreamReader; faults: () => FaultRates; concurrency: number },
) {
  const config = simConfig(opts.endpoint, opts.tableName, process.env);
  const queue = new SimQueue(steps, opts.faults);
  const scheduler = new SimScheduler(steps, queue, opts.faults);
  const notifications = new SimNotifications(steps);
  const receivers = new Receivers(steps, SIM_TIMEOUT_MS);
  const adapters = {
    queue: queue as unknown as SqsDeliveryQueue,
    scheduler,
    notificationQueue: notifications,
    deadLetters: new SimDeadLetters(steps, queue),
  };
  const db = dynamoOf(config);
  const deps = Object.assign(
    {},
    apiDeps(config),
    fanoutDeps(config, adapters),
    notifyDeps(config, adapters),
    deliverDeps(config, adapters),
    sweepDeps(config, adapters),
    { deliveries: new DynamoDeliveryStore(db), endpoints: new DynamoEndpointStore(db) },
    { sender: receivers, checkTarget: async (url: string) => ({ ok: true as const, url: new URL(url) }) },
  );
  const asLambda =
    <E, R>(name: string, handler: (event: E, context: never) => Promise<R>) =>
    (event: E) =>
      invoke(handler as never, event, lambdaContext(name, `${name}-${steps.clock.now()}`)) as Promise<R>;
  const deliver = asLambda<SQSEvent, SQSBatchResponse>('deliver', makeDeliver(() => deps) as never);
  const fanout = asLambda<DynamoDBStreamEvent, DynamoDBBatchResponse>('fanout', makeFanout(() => deps) as never);
  const sweep = asLambda<object, unknown>('sweep', makeSweep(() => deps) as never);
  const stream = new StreamEventSource(steps, opts.reader, fanout, opts.faults);
  const consumer = new QueueEventSource(steps, queue, deliver, {
    concurrency: opts.concurrency,
    killRate: () => opts.faults().kill,
  });
  return {
    config,
    deps,
    db,
    queue,
    receivers,
    notifications,
    stream,
    consumer,
    sweep,
    /** Puts the table behind the gates (after the run's setup, which needs none). */
    gate: () => gateTable(db, steps, opts.faults, () => stream.wake()),
    close: () => db.client.destroy(),
  };
}

export type World = Awaited<ReturnType<typeof buildWorld>>;
