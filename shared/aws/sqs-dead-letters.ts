import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** A queue message the ingest function can never record (not JSON, not a valid call, an unknown shop), and why. */
export interface RefusedMessage {
  messageId: string;
  body: string;
  error: { code: string; message: string; param: string | null };
}

/** Where refused messages are set aside for an operator to inspect, fix and redrive (docs/operations.md). */
export interface IngestDeadLetters {
  setAside(message: RefusedMessage): Promise<void>;
}

/** SQS caps a message attribute's value with the body; an error message is short, but a bound keeps a long one from costing the body its place. */
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
