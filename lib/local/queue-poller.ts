import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '../../shared/logger';
import type { ChaosDraws } from './chaos';

/**
 * An idle queue's long poll. Short: local-aws-sqs keeps a receive going after its client has gone,
 * so the one stop() cuts off still takes the next message sent to the queue within its wait, and
 * hides it for the visibility timeout (from a consumer started after this one stops, and with it
 * the order of everything after it).
 */
const LONG_POLL_SECONDS = 1;

export interface QueuePollerOptions {
  /** A client of the emulator that serves the queue (lib/local/sqs.ts). */
  sqs: SQSClient;
  queueUrl: string;
  queueArn: string;
  handler: (event: SQSEvent) => Promise<SQSBatchResponse>;
  batchSize?: number;
  concurrency?: number;
  /** Receives at a time (default 5, at most `concurrency`). */
  pollers?: number;
  /** Chaos mode (./chaos.ts): received messages reordered, some handled late, some twice. */
  chaos?: ChaosDraws;
}

export interface QueuePoller {
  /** Stops receiving and waits for batches in flight. */
  stop(): Promise<void>;
}

/**
 * Lambda's SQS event source, locally: receive batches of up to `batchSize`, invoke the
 * handler with up to `concurrency` batches at a time, delete what succeeded; the rest
 * becomes visible again after the visibility timeout.
 *
 * local-aws-sqs answers a receive only once it has `MaxNumberOfMessages` messages or its
 * wait is over (at least 40 ms), checking every 10 ms. So an idle queue is watched with a
 * long poll for one message (answered within 10 ms of a send, no busy loop), and a busy
 * one is received from in batches sized to what is visible (answered on the next check).
 */
export function startQueuePoller(opts: QueuePollerOptions): QueuePoller {
  const batchSize = opts.batchSize ?? 10;
  // Lambda scales out per batch; a batch waiting on a slow receiver must not stop the others (at most
  // MAX_IN_FLIGHT of them can hold a request to one endpoint).
  const concurrency = opts.concurrency ?? 16;
  // Lambda's SQS event source polls with several connections at once (five to begin with): messages
  // sent together go out in parallel batches, not one receive after another. local-aws-sqs answers a
  // receive on its next 10 ms check at the earliest, so with one loop the third of four messages
  // sent together would wait two receives.
  const pollers = Math.max(1, Math.min(opts.pollers ?? 5, concurrency));
  let running = true;
  // stop() aborts a pending long poll instead of waiting it out.
  const stopping = new AbortController();
  const inFlight = new Set<Promise<void>>();
  // Chaos mode's late messages and copies, until they are handed over (stop() drops them: the queue
  // dies with the stack).
  const later = new Set<NodeJS.Timeout>();

  const dispatch = (messages: Message[]) => {
    const batch = invokeAndDelete(messages, opts).catch((err: unknown) =>
      logger.error('Local queue delete failed', { error: err as Error }),
    );
    inFlight.add(batch);
    void batch.finally(() => inFlight.delete(batch));
  };
  // A copy keeps its message's id and receipt handle, as a duplicate from SQS keeps its id: whichever
  // copy is done first deletes the message, and the other's delete finds it gone.
  const handOver = (messages: Message[]) => {
    if (!opts.chaos) return dispatch(messages);
    const { now, later: held } = opts.chaos.receive(messages);
    if (now.length > 0) dispatch(now);
    for (const { message, afterMs } of held) {
      const timer = setTimeout(() => {
        later.delete(timer);
        if (running) dispatch([message]);
      }, afterMs);
      later.add(timer);
    }
  };

  // Batches invoked plus receives under way: a receive holds the slot its batch will take.
  let receiving = 0;
  const loop = async () => {
    let idle = false;
    while (running) {
      if (inFlight.size + receiving >= concurrency) {
        await Promise.race(inFlight);
        continue;
      }
      let messages: Message[];
      receiving++;
      try {
        ({ messages, idle } = await receive(opts, { idle, batchSize, signal: stopping.signal }));
      } catch (err) {
        if (!running) break;
        logger.error('Local queue receive failed', { error: err as Error });
        await new Promise((r) => setTimeout(r, 200));
        continue;
      } finally {
        receiving--;
      }
      if (messages.length > 0) handOver(messages);
    }
  };
  const loopsDone = Promise.all(Array.from({ length: pollers }, loop));

  return {
    stop: async () => {
      running = false;
      stopping.abort();
      for (const timer of later) clearTimeout(timer);
      later.clear();
      await loopsDone;
      await Promise.allSettled([...inFlight]);
    },
  };
}

/** One batch to the handler, as Lambda invokes it; then the messages it did not fail are deleted. */
async function invokeAndDelete(messages: Message[], opts: QueuePollerOptions): Promise<void> {
  const event: SQSEvent = {
    Records: messages.map((m) => ({
      messageId: m.MessageId as string,
      receiptHandle: m.ReceiptHandle as string,
      body: m.Body as string,
      attributes: (m.Attributes ?? {}) as never,
      messageAttributes: {},
      md5OfBody: m.MD5OfBody as string,
      eventSource: 'aws:sqs',
      eventSourceARN: opts.queueArn,
      awsRegion: 'us-east-1',
    })),
  };
  let failed = new Set<string>(event.Records.map((r) => r.messageId));
  try {
    const response = await opts.handler(event);
    failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  } catch (err) {
    logger.error('Delivery consumer failed a whole batch', { error: err as Error });
  }
  const done = event.Records.filter((r) => !failed.has(r.messageId));
  if (done.length > 0) {
    await opts.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: opts.queueUrl,
        Entries: done.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
      }),
    );
  }
}

/** Messages waiting to be received: visible, and not in flight. */
async function visibleCount(opts: QueuePollerOptions, signal: AbortSignal): Promise<number> {
  const attributes = await opts.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: opts.queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
    { abortSignal: signal },
  );
  // local-aws-sqs counts the messages in flight in ApproximateNumberOfMessages (SQS does not): asking
  // for those too, a receive would wait out the 40 ms minimum whenever a batch is in flight (a hanging
  // receiver's holds one for its whole timeout), and every other endpoint's messages with it.
  const count = (name: 'ApproximateNumberOfMessages' | 'ApproximateNumberOfMessagesNotVisible') =>
    Number(attributes.Attributes?.[name] ?? 0);
  return Math.max(0, count('ApproximateNumberOfMessages') - count('ApproximateNumberOfMessagesNotVisible'));
}

/**
 * A receive sized to what waits, or a long poll for one message when nothing does. After a long
 * poll that came back empty nothing was waiting, so the next one goes without reading the count:
 * an idle queue costs one request a second per poller, not two.
 */
async function receive(
  opts: QueuePollerOptions,
  { idle, batchSize, signal }: { idle: boolean; batchSize: number; signal: AbortSignal },
): Promise<{ messages: Message[]; idle: boolean }> {
  const visible = idle ? 0 : await visibleCount(opts, signal);
  const wait = visible > 0 ? 0 : LONG_POLL_SECONDS;
  // The event sources' client sets no request timeout: a receive cut off and retried would leave
  // its messages hidden for the visibility timeout.
  const out = await opts.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: opts.queueUrl,
      MaxNumberOfMessages: Math.max(1, Math.min(batchSize, visible)),
      WaitTimeSeconds: wait,
      AttributeNames: ['All'],
    }),
    { abortSignal: signal },
  );
  const messages = out.Messages ?? [];
  return { messages, idle: wait > 0 && messages.length === 0 };
}
