import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { AccountPrincipal } from 'aws-cdk-lib/aws-iam';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
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

/**
 * The internal call-ingest function: the voice platform invokes it directly
 * (lambda:InvokeFunction) with each finished call. It writes calls, jobs and their events
 * to the table; the delivery pipeline takes over from the table stream.
 */
export class CallIngest extends Construct {
  readonly fn: ServiceFunction;
  readonly functions: ServiceFunction[];
  readonly deadLetterQueues: Queue[];

  constructor(scope: Construct, id: string, props: CallIngestProps) {
    super(scope, id);
    // Failed asynchronous invocations land here (a synchronous caller sees the error itself).
    const dlq = deadLetterQueue(this, 'IngestDlq');
    this.fn = new ServiceFunction(this, 'Ingest', {
      logRetention: props.logRetention,
      logLevel: props.config.logLevel,
      sourceMaps: props.config.sourceMaps,
      tracing: pipelineTracing(props.config),
      entry: PIPELINE_FUNCTIONS.Ingest,
      description: 'Internal: the voice platform records finished calls (lambda:InvokeFunction)',
      deadLetterQueue: dlq,
    });
    this.fn.bindTable(props.table, false);
    if (props.config.ingestInvokerAccount) {
      // The voice platform in its own account: its role still needs lambda:InvokeFunction there too.
      this.fn.addPermission('VoicePlatform', { principal: new AccountPrincipal(props.config.ingestInvokerAccount), action: 'lambda:InvokeFunction' });
    }
    this.functions = [this.fn];
    this.deadLetterQueues = [dlq];
  }
}
