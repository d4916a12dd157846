import {
  Annotations,
  CfnOutput,
  RemovalPolicy,
  Stack,
  Validations,
  type CfnElement,
  type StackProps,
} from 'aws-cdk-lib';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { configFromContext, type ServiceConfig } from './config';
import { Alarms } from './constructs/alarms';
import { Api } from './constructs/api';
import { ServiceDashboard } from './constructs/dashboard';
import { Delivery } from './constructs/delivery';
import { CallIngest } from './constructs/ingest';
import { DeliverySweeper } from './constructs/sweeper';
import { ServiceTable } from './constructs/table';

/** The constructs the alarms and outputs read. */
interface Parts {
  table: ServiceTable['table'];
  api: Api;
  delivery: Delivery;
  ingest: CallIngest;
}

/** Wires the constructs; each concern lives in its own construct under lib/constructs. */
export class ShopCallsStack extends Stack {
  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const config = configFromContext(this.node);
    const logRetention = config.logRetentionDays as RetentionDays;
    const { table } = new ServiceTable(this, 'Data');

    const { secretsKey, cursorSecret } = this.#keys();
    const api = new Api(this, 'Api', { table, secretsKey, cursorSecret, config, logRetention });
    const delivery = new Delivery(this, 'Delivery', { table, secretsKey, config, logRetention });
    const ingest = new CallIngest(this, 'CallIngest', { table, config, logRetention });
    const sweeper = new DeliverySweeper(this, 'Sweeper', {
      table,
      queue: delivery.queue,
      deliveryDeadLetters: delivery.deliveryDeadLetterQueue,
      config,
      logRetention,
    });
    if (!config.alarmEmail) {
      // Loud on purpose: without a subscriber every alarm below fires into an empty topic.
      Annotations.of(this).addWarningV2(
        'shop-calls:no-alarm-email',
        'No alarmEmail: alarms go to an SNS topic nobody is subscribed to. Deploy with -c ' +
          'alarmEmail=ops@example.com (docs/deploy.md).',
      );
    }
    const alarms = this.#alarms({ config, table, api, delivery, ingest, sweeper });
    if (config.dashboard) {
      new ServiceDashboard(this, 'Dashboard', {
        httpApi: api.httpApi,
        deliveryQueue: delivery.queue,
        fanout: delivery.fanout,
        consumer: delivery.consumer,
        table,
      });
    }

    this.#acknowledge(table, cursorSecret);
    this.#outputs({ api, table, secretsKey, ingest, alarms });
  }

  /** The KMS key that seals webhook secrets and stored idempotent responses, and the cursors' HMAC key. */
  #keys() {
    // Encrypts webhook signing secrets and stored idempotent responses (envelope encryption).
    const secretsKey = new Key(this, 'SecretsKey', {
      enableKeyRotation: true,
      description: 'Shop Calls API: webhook secrets',
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const cursorSecret = new Secret(this, 'CursorKey', {
      description: 'HMAC key of list cursors (rotating it invalidates open cursors: clients restart the listing)',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
    });

    return { secretsKey, cursorSecret };
  }

  #alarms(parts: Parts & { config: ServiceConfig; sweeper: DeliverySweeper }): Alarms {
    const { config, table, api, delivery, ingest, sweeper } = parts;
    return new Alarms(this, 'Alarms', {
      httpApi: api.httpApi,
      streamConsumer: delivery.fanout,
      queueConsumer: { fn: delivery.consumer, timeout: delivery.consumerTimeout },
      table,
      sweeper: sweeper.fn,
      functions: [...api.functions, ...delivery.functions, ...ingest.functions, ...sweeper.functions].map((fn) => ({
        id: fn.node.id,
        fn,
      })),
      // In this order, so each dead-letter alarm keeps its name.
      deadLetterQueues: [...delivery.deadLetterQueues, ...ingest.deadLetterQueues, ...sweeper.deadLetterQueues],
      deliveryQueue: delivery.queue,
      ingestQueue: ingest.queue,
      alarmEmail: config.alarmEmail,
      perFunctionAlarms: config.perFunctionAlarms,
    });
  }

  /** cdk-nag findings that apply stack-wide, each with its reason. */
  #acknowledge(table: ServiceTable['table'], cursorSecret: Secret): void {
    Validations.of(cursorSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason: 'Rotating the cursor key invalidates every open list cursor; it is rotated by hand (docs/operations.md).',
    });
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      reason:
        'The standard Lambda logging policy (create log streams, put log events); each function ' +
        'writes to its own log group.',
    });
    Validations.of(this).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${this.getLogicalId(table.node.defaultChild as CfnElement)}.Arn>/index/*]`,
      reason:
        'Table grants include its global secondary indexes (gsi1, and gsi2 the due index), which ' +
        'IAM expresses as index/*.',
    });
  }

  #outputs(parts: Pick<Parts, 'api' | 'table' | 'ingest'> & { secretsKey: Key; alarms: Alarms }): void {
    const { api, table, secretsKey, ingest, alarms } = parts;
    new CfnOutput(this, 'ApiUrl', { value: api.url, description: 'Base URL; paths start with /v1' });
    new CfnOutput(this, 'TableName', { value: table.tableName });
    // With TableName, all the operator CLI needs (`npm run cli -- --stack NAME`, docs/deploy.md).
    new CfnOutput(this, 'Region', { value: this.region });
    new CfnOutput(this, 'SecretsKeyArn', {
      value: secretsKey.keyArn,
      description: 'Seals webhook secrets (the CLI uses it to create endpoints)',
    });
    new CfnOutput(this, 'IngestQueueUrl', {
      value: ingest.queue.queueUrl,
      description: 'The voice platform sends each finished call here (docs/api.md, Call ingest)',
    });
    new CfnOutput(this, 'IngestQueueArn', {
      value: ingest.queue.queueArn,
      description: "For the voice platform's sqs:SendMessage grant",
    });
    new CfnOutput(this, 'IngestDlqUrl', {
      value: ingest.deadLetterQueue.queueUrl,
      description: 'Calls that could not be recorded, with the reason: inspect and redrive (docs/operations.md)',
    });
    new CfnOutput(this, 'IngestFunctionArn', {
      value: ingest.fn.functionArn,
      description: 'The ingest function, for a voice platform that invokes it directly instead',
    });
    new CfnOutput(this, 'AlarmTopicArn', { value: alarms.topic.topicArn });
  }
}
