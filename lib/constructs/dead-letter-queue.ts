import { Duration, Validations } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/**
 * A dead-letter queue as every asynchronous hop of the service has one: SQS-managed
 * encryption, TLS only, 14 days to inspect and redrive. Pass it to the Alarms construct
 * (`deadLetterQueues`): the acknowledgement below holds because an alarm watches it.
 */
export function deadLetterQueue(scope: Construct, id: string): Queue {
  const queue = new Queue(scope, id, {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  Validations.of(queue).acknowledge({
    id: 'AwsSolutions-SQS3',
    reason: 'This queue is itself a dead-letter queue; an alarm watches it.',
  });
  Validations.of(queue).acknowledge({
    id: 'Serverless-SQSRedrivePolicy',
    reason: 'This queue is itself a dead-letter queue (the last stop); an alarm watches it.',
  });
  return queue;
}
