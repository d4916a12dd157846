import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { DeliveryMessage } from '../shared/delivery/records';
import type { DeadLetteredDelivery, DeliveryDeadLetters } from '../shared/delivery/dead-letters';
import type { RetryScheduler } from '../shared/delivery/ports';
import type { FaultRates } from './faults';
import { Killed, type Steps } from './steps';

/** The delivery queue's settings in the stack (lib/constructs/delivery.ts). */
const VISIBILITY_MS = 180_000;
const MAX_RECEIVES = 5;
const SQS_MAX_DELAY_MS = 15 * 60_000;

interface Message {
  id: string;
  body: string;
  visibleAt: number;
  receives: number;
  receipt: string;
  gone: boolean;
}

/**
 * An SQS standard queue as AWS documents it: at least once (a message can be received again
 * while its first copy is in work), in any order, a little late; a receipt handle from an
 * earlier receive may not delete; after `MAX_RECEIVES` receives a message moves to the
 * dead-letter queue.
 */
export class SimQueue {
  readonly queueUrl = 'sim://delivery-queue';
  readonly messages: Message[] = [];
  readonly deadLetters: Message[] = [];
  private sent = 0;
  /** Called when a message may have become visible (the event source polls then). */
  onVisible: (at: number) => void = () => {};

  constructor(
    private readonly steps: Steps,
    private readonly faults: () => FaultRates,
  ) {}

  async send(messages: DeliveryMessage[]): Promise<void> {
    await this.steps.gate(`queue send ${messages.map((m) => `${m.delivery_id}@${m.attempt}`).join(',')}`);
    for (const m of messages) this.put(JSON.stringify(m), 0);
  }

  async sendDelayed(message: DeliveryMessage, delaySeconds: number): Promise<void> {
    await this.steps.gate(`queue send ${message.delivery_id}@${message.attempt} in ${delaySeconds}s`);
    this.put(JSON.stringify(message), Math.min(900, Math.max(0, Math.ceil(delaySeconds))) * 1000);
  }

  private put(body: string, delayMs: number): void {
    const late = this.steps.invocation()?.faults !== false && this.steps.rng.chance(this.faults().queueLate);
    const visibleAt = this.steps.clock.now() + delayMs + (late ? this.steps.rng.int(1, 3000) : 0);
    this.messages.push({ id: `m${++this.sent}`, body, visibleAt, receives: 0, receipt: '', gone: false });
    this.onVisible(visibleAt);
  }

  /** Up to `max` visible messages, in any order; each hidden for the visibility timeout (unless duplicated). */
  receive(max: number): Message[] {
    const now = this.steps.clock.now();
    const visible = this.steps.rng.shuffle(this.messages.filter((m) => !m.gone && m.visibleAt <= now));
    const out: Message[] = [];
    for (const m of visible) {
      if (out.length >= max) break;
      m.receives++;
      if (m.receives > MAX_RECEIVES) {
        m.gone = true;
        this.deadLetters.push({ ...m, receipt: `dlq-${m.id}` });
        this.steps.log(`queue ${m.id} moved to the dead-letter queue`);
        continue;
      }
      m.receipt = `${m.id}/${m.receives}`;
      // Its visibility may run out while the first copy is still in work: another receive gets it.
      const twice = this.steps.rng.chance(this.faults().queueDuplicate);
      m.visibleAt = now + (twice ? this.steps.rng.int(0, 50) : VISIBILITY_MS);
      if (twice) this.steps.log(`queue ${m.id} will be received again while in work`);
      this.onVisible(m.visibleAt);
      out.push({ ...m });
    }
    return out;
  }

  /** Deletes by receipt: an old receipt (the message was received again since) may not delete it. */
  delete(receipt: string): void {
    const [id] = receipt.split('/');
    const m = this.messages.find((x) => x.id === id);
    if (!m || m.gone) return;
    if (m.receipt !== receipt && this.steps.rng.chance(0.5)) return;
    if (this.steps.rng.chance(this.faults().queueDeleteLost)) {
      this.steps.log(`queue ${m.id} delete lost`);
      return;
    }
    m.gone = true;
  }

  pending(): number {
    return this.messages.filter((m) => !m.gone).length;
  }
}

/** Lambda's SQS event source: batches of up to 10, up to `concurrency` invocations, deletes what succeeded. */
export class QueueEventSource {
  private running = 0;
  private polls = new Set<number>();

  constructor(
    private readonly steps: Steps,
    private readonly queue: SimQueue,
    private readonly handler: (event: SQSEvent) => Promise<SQSBatchResponse>,
    private readonly opts: { concurrency: number; killRate: () => number },
  ) {
    queue.onVisible = (at) => this.pollAt(at);
  }

  pollAt(at: number): void {
    const when = Math.max(at, this.steps.clock.now()) + this.steps.rng.int(0, 20);
    if (this.polls.has(when)) return;
    this.polls.add(when);
    this.steps.clock.at(when, 'queue poll', () => {
      this.polls.delete(when);
      this.poll();
    });
  }

  private poll(): void {
    while (this.running < this.opts.concurrency) {
      const batch = this.queue.receive(this.steps.rng.int(1, 10));
      if (batch.length === 0) return;
      this.running++;
      void this.invoke(batch).finally(() => {
        this.running--;
        this.pollAt(this.steps.clock.now());
      });
    }
  }

  private async invoke(batch: Message[]): Promise<void> {
    const event: SQSEvent = {
      Records: batch.map((m) => ({
        messageId: m.id,
        receiptHandle: m.receipt,
        body: m.body,
        attributes: { ApproximateReceiveCount: String(m.receives) } as never,
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:sim',
        awsRegion: 'us-east-1',
      })),
    };
    const killAt = this.steps.rng.chance(this.opts.killRate()) ? this.steps.rng.int(1, 12) : null;
    // A handler that throws fails its whole batch, as Lambda's event source takes it: every message comes back.
    const result = await this.steps
      .invoke('deliver', () => this.handler(event), { killAt })
      .catch((e: unknown) => {
        this.steps.log(`deliver failed its whole batch: ${String(e)}`);
        return null;
      });
    if (result === null || result instanceof Killed) return;
    const failed = new Set(result.batchItemFailures.map((f) => f.itemIdentifier));
    await this.steps.gate('queue delete');
    for (const r of event.Records) if (!failed.has(r.messageId)) this.queue.delete(r.receiptHandle);
  }
}

/**
 * EventBridge Scheduler past the queue's 15-minute delay, the queue's delay before it: at least
 * once (a schedule may fire twice), and up to a minute late.
 */
export class SimScheduler implements RetryScheduler {
  constructor(
    private readonly steps: Steps,
    private readonly queue: SimQueue,
    private readonly faults: () => FaultRates,
  ) {}

  needsSchedule(delayMs: number): boolean {
    return delayMs > SQS_MAX_DELAY_MS;
  }

  async schedule(message: DeliveryMessage, at: Date): Promise<void> {
    const delayMs = at.getTime() - this.steps.clock.now();
    if (!this.needsSchedule(delayMs)) return this.queue.sendDelayed(message, delayMs / 1000);
    await this.steps.gate(`schedule ${message.delivery_id}@${message.attempt}`);
    const fires = this.steps.rng.chance(this.faults().scheduleTwice) ? 2 : 1;
    for (let i = 0; i < fires; i++) {
      const when = at.getTime() + this.steps.rng.int(0, 60_000);
      this.steps.clock.at(when, 'schedule fires', () => {
        void this.steps.invoke('scheduler', () => this.queue.send([message]), { faults: false });
      });
    }
  }
}

/** The delivery queue's dead-letter queue, as the sweeper drains it. */
export class SimDeadLetters implements DeliveryDeadLetters {
  constructor(
    private readonly steps: Steps,
    private readonly queue: SimQueue,
  ) {}

  async receive(): Promise<DeadLetteredDelivery[]> {
    await this.steps.gate('dead letters receive');
    return this.queue.deadLetters.slice(0, 10).map((m) => ({
      receipt: m.receipt,
      message: JSON.parse(m.body) as DeliveryMessage,
    }));
  }

  async remove(receipts: string[]): Promise<void> {
    await this.steps.gate('dead letters remove');
    const gone = new Set(receipts);
    for (let i = this.queue.deadLetters.length - 1; i >= 0; i--)
      if (gone.has((this.queue.deadLetters[i] as Message).receipt)) this.queue.deadLetters.splice(i, 1);
  }
}
