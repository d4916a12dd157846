import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { deadLetteredMessage, type DeadLetteredDelivery, type DeliveryDeadLetters } from '../delivery/dead-letters';

/**
 * A queue message the ingest function can never record (not JSON, not a valid call, an unknown
 * shop, a call too large to store), and why.
 */
export interface RefusedMessage {
  messageId: string;
  body: string;
  error: { code: string; message: string; param: string | null };
}

/** Where refused messages are set aside for an operator to inspect, fix and redrive (docs/operations.md). */
export interface IngestDeadLetters {
  setAside(message: RefusedMessage): Promise<void>;
}

/**
 * SQS caps a message attribute's value with the body; an error message is short, but a bound keeps
 * a long one from costing the body its place.
 */
const MAX_REASON = 1000;

/**
 * The ingest dead-letter queue on SQS. The body goes unchanged, so a redrive (once the shop
 * exists, or the sender fixed its payload) delivers the same call; the reason rides in the
 * message attributes Lambda itself gives a failed asynchronous invocation in the same queue
 * (`ErrorCode`, `ErrorMessage`), plus the message's id on the ingest queue and the field at fault.
 */
export class SqsIngestDeadLetters implements IngestDeadLetters {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async setAside({ messageId, body, error }: RefusedMessage): Promise<void> {
    const text = (value: string) => ({ DataType: 'String', StringValue: value });
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: body,
        MessageAttributes: {
          ErrorCode: text(error.code),
          ErrorMessage: text(error.message.slice(0, MAX_REASON)),
          SourceMessageId: text(messageId),
          ...(error.param ? { ErrorParam: text(error.param) } : {}),
        },
      }),
    );
  }
}

/**
 * The delivery queue's dead-letter queue, as the sweeper drains it (shared/delivery/dead-letters.ts):
 * no long poll (a sweep must not wait on an empty queue), and a message received is hidden for
 * the sweep's run, so two overlapping sweeps do not both take it.
 */
export class SqsDeliveryDeadLetters implements DeliveryDeadLetters {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async receive(): Promise<DeadLetteredDelivery[]> {
    const out = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 60,
      }),
    );
    return (out.Messages ?? []).map((m) => ({
      receipt: m.ReceiptHandle as string,
      message: deadLetteredMessage(m.Body ?? ''),
    }));
  }

  async remove(receipts: string[]): Promise<void> {
    // A receipt not removed (a failed entry) shows the message again after its visibility timeout:
    // the next sweep sees it, harmlessly.
    await this.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: this.queueUrl,
        Entries: receipts.map((ReceiptHandle, i) => ({ Id: String(i), ReceiptHandle })),
      }),
    );
  }
}
