import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { makeHandler as makeAuthorizer } from '../../functions/authorizer';
import { makeHandler as makeDeliver } from '../../functions/deliver';
import { makeHandler as makeFanout } from '../../functions/fanout';
import { makeHandler as makeIngest } from '../../functions/ingest';
import { makeHandler as makeNotify } from '../../functions/notify';
import { makeHandler as makeSweep } from '../../functions/sweep';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import {
  SqsDeliveryDeadLetters,
  SqsIngestDeadLetters,
  type IngestDeadLetters,
} from '../../shared/aws/sqs-dead-letters';
import type { BatchResponse } from '../../shared/batch';
import { SqsDeliveryQueue } from '../../shared/delivery/aws/sqs-queue';
import type { Config } from '../../shared/config';
import { apiDeps, type ApiDeps } from '../../shared/wiring/api';
import { dynamoOf } from '../../shared/wiring/clients';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';
import { DynamoEndpointStore } from '../../shared/store/webhook-endpoints';
import { SqsNotificationQueue } from '../../shared/aws/sqs-notification-queue';
import { deliverDeps, fanoutDeps, notifyDeps, sweepDeps, type PipelineDeps } from '../../shared/wiring/pipeline';
import type { MetricSink } from '../../shared/observability/delivery-metrics';
import { LocalRetryScheduler, OutboxMailer } from './adapters';
import type { ChaosDraws } from './chaos';
import { CONSUMER_TIMEOUT_MS } from '../limits';
import { invoke, localFunction } from './invocations';

/** Every port any handler uses, in one object: the local stack runs all of them in one process. */
export type LocalDeps = ApiDeps & PipelineDeps & { ingestDeadLetters: IngestDeadLetters };

/**
 * The local stack's wiring: the cloud's parts built from its config, with timers for schedules and
 * an outbox for emails.
 */
export function localDeps(
  config: Config,
  local: { sqs: SQSClient; outboxDir: string; schedulerChaos?: ChaosDraws },
): LocalDeps {
  const queue = new SqsDeliveryQueue(local.sqs, config.queueUrl);
  const adapters = {
    queue,
    scheduler: new LocalRetryScheduler(
      queue,
      local.schedulerChaos && { draws: local.schedulerChaos, timeScale: config.webhooks.timeScale },
    ),
    mailer: new OutboxMailer(local.outboxDir),
    notificationQueue: new SqsNotificationQueue(local.sqs, config.notifyQueueUrl),
    deadLetters: config.deliveryDlqUrl ? new SqsDeliveryDeadLetters(local.sqs, config.deliveryDlqUrl) : undefined,
  };
  // Its queue is read at first use: a pipeline set up without the ingest queue (the benchmarks') never needs it.
  const ingestDeadLetters: IngestDeadLetters = {
    setAside: async (message) => new SqsIngestDeadLetters(local.sqs, config.ingestDlqUrl).setAside(message),
  };
  return Object.assign(
    { ingestDeadLetters },
    apiDeps(config),
    fanoutDeps(config, adapters),
    notifyDeps(config, adapters),
    deliverDeps(config, adapters),
    sweepDeps(config, adapters),
    // One object serves every handler here: where a cloud function takes a narrower store (the
    // consumer's delivery rows and endpoint gate), the full store, which extends it, serves all.
    { deliveries: new DynamoDeliveryStore(dynamoOf(config)), endpoints: new DynamoEndpointStore(dynamoOf(config)) },
  );
}

export type LambdaHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * The same handler modules Lambda runs, each given this stack's ports instead of reading the
 * environment. Each call is an invocation of its own (./invocations.ts), as in Lambda: its own
 * Context, and its own log context however the calls interleave in this one process.
 */
export function localHandlers(deps: LocalDeps, deliveryMetrics?: MetricSink) {
  const loaded = new Map<string, Promise<LambdaHandler>>();
  return {
    authorizer: localFunction(
      'authorizer',
      makeAuthorizer(() => deps),
    ),
    fanout: localFunction(
      'fanout',
      makeFanout(() => deps),
    ),
    notify: localFunction(
      'notify',
      makeNotify(() => deps),
    ),
    deliver: localFunction(
      'deliver',
      makeDeliver(() => deps, deliveryMetrics),
      CONSUMER_TIMEOUT_MS,
    ),
    sweep: localFunction(
      'sweep',
      makeSweep(() => deps),
    ),
    ingest: localFunction<SQSEvent, BatchResponse>(
      'ingest',
      makeIngest(() => deps),
    ),
    /**
     * An operation's handler by its file (relative to the repository root), loaded on first use;
     * the caller names the invocation in its Context.
     */
    operation(file: string): Promise<LambdaHandler> {
      let handler = loaded.get(file);
      if (!handler) {
        // Relative to this file (lib/local), so it resolves the same under tsx (ESM) and jest (CJS).
        handler = import(`../../${file.replace(/\.ts$/, '')}`).then(
          (mod: { makeHandler(deps: () => LocalDeps): LambdaHandler }) => {
            const operation = mod.makeHandler(() => deps);
            return (event, context) => invoke(operation, event, context);
          },
        );
        loaded.set(file, handler);
      }
      return handler;
    },
  };
}

export type LocalHandlers = ReturnType<typeof localHandlers>;
