import { Duration, Validations } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { AccountPrincipal, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { ServiceConfig } from '../config';
import { deadLetterQueue } from './dead-letter-queue';
import { PIPELINE_FUNCTIONS } from './entries';
import { ServiceFunction, pipelineTracing } from './function';

export interface CallIngestProps {
  table: ITableV2;
  config: ServiceConfig;
  logRetention: RetentionDays;
}

const INGEST_TIMEOUT = Duration.seconds(10);
/**
 * Receives before SQS itself moves a message whose ingest keeps failing (the table, not the call)
 * to the dead-letter queue.
 */
export const INGEST_MAX_RECEIVES = 5;
/**
 * Concurrent batches the ingest queue may drive: 10 × 10 calls at a time is far above the rate
 * calls end, and a backlog (an outage, a redrive of the dead-letter queue) drains without taking
 * the account's concurrency from the API.
 */
export const INGEST_MAX_CONCURRENCY = 10;

/**
 * The voice platform's way in: it sends each finished call to the ingest queue, whose consumer
 * writes calls, jobs and their events to the table; the delivery pipeline takes over from the
 * table stream. The function can also be invoked directly (lambda:InvokeFunction). One
 * dead-letter queue holds what could not be recorded, whichever way it came: messages refused at
 * once (set aside by the function, with the reason), messages that failed five times, and failed
 * asynchronous invocations. Its messages are call payloads in the queue's format, so an operator
 * redrives them to the ingest queue (docs/operations.md).
 */
export class CallIngest extends Construct {
  readonly fn: ServiceFunction;
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly functions: ServiceFunction[];
  readonly deadLetterQueues: Queue[];

  constructor(scope: Construct, id: string, props: CallIngestProps) {
    super(scope, id);
    const { config } = props;
    const dlq = deadLetterQueue(this, 'IngestDlq');
    this.queue = new Queue(this, 'Calls', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // At least 6 × the function's timeout, so a batch still running is never handed out twice.
      visibilityTimeout: Duration.seconds(INGEST_TIMEOUT.toSeconds() * 6),
      deadLetterQueue: { queue: dlq, maxReceiveCount: INGEST_MAX_RECEIVES },
    });
    this.fn = new ServiceFunction(this, 'Ingest', {
      logRetention: props.logRetention,
      logLevel: config.logLevel,
      sourceMaps: config.sourceMaps,
      tracing: pipelineTracing(config),
      entry: PIPELINE_FUNCTIONS.Ingest,
      description: 'The voice platform records finished calls (ingest queue, or lambda:InvokeFunction)',
      timeout: INGEST_TIMEOUT,
      // Failed asynchronous invocations land here, sent with the function's role: the same grant
      // lets the function set refused messages aside.
      deadLetterQueue: dlq,
      environment: { INGEST_DLQ_URL: dlq.queueUrl },
    });
    this.fn.bindTable(props.table, false);
    this.fn.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: 10,
        reportBatchItemFailures: true,
        maxConcurrency: INGEST_MAX_CONCURRENCY,
      }),
    );
    Validations.of(this.fn).acknowledge({
      id: 'Serverless-LambdaEventSourceMappingDestination',
      reason:
        `SQS event sources take no on-failure destination: a call that cannot be recorded moves to ` +
        `IngestDlq, at once when it is refused or by the queue's redrive policy ` +
        `(${INGEST_MAX_RECEIVES} receives); an alarm watches it.`,
    });
    if (config.ingestSenderAccount) {
      // The voice platform in its own account: its role still needs sqs:SendMessage on the queue there too.
      this.queue.addToResourcePolicy(
        new PolicyStatement({
          sid: 'VoicePlatformSendsCalls',
          principals: [new AccountPrincipal(config.ingestSenderAccount)],
          actions: ['sqs:SendMessage'],
          resources: [this.queue.queueArn],
        }),
      );
    }
    if (config.ingestInvokerAccount) {
      // Direct invocation from the voice platform's account: its role still needs lambda:InvokeFunction there too.
      this.fn.addPermission('VoicePlatform', {
        principal: new AccountPrincipal(config.ingestInvokerAccount),
        action: 'lambda:InvokeFunction',
      });
    }
    this.functions = [this.fn];
    this.deadLetterQueue = dlq;
    this.deadLetterQueues = [dlq];
  }
}
