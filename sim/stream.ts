import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { passesFanoutFilter } from '../shared/stream-filters';
import type { FaultRates } from './faults';
import { Killed, type Steps } from './steps';
import type { StreamReader } from './table-stream';

/** Lambda's batch size for the table stream (lib/constructs/delivery.ts). */
const BATCH = 100;

/**
 * Lambda's DynamoDB stream event source: one batch at a time per shard, in order, filtered as
 * the event source's FilterCriteria. A batch that reports failures is retried from the first
 * failed record; one that throws or is killed is bisected (`bisectBatchOnError`) and retried;
 * one that succeeded may run again (an invocation that timed out after doing its work).
 */
export class StreamEventSource {
  private backlog: DynamoDBRecord[] = [];
  private busy = false;
  private wanted = false;
  /** Records fanned out, by sequence number: the run's count of at-least-once repeats. */
  readonly repeats = { batches: 0 };

  constructor(
    private readonly steps: Steps,
    private readonly reader: StreamReader,
    private readonly handler: (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>,
    private readonly faults: () => FaultRates,
  ) {}

  /** A write committed: poll soon (the event source polls a shard about four times a second). */
  wake(): void {
    if (this.wanted) return;
    this.wanted = true;
    this.steps.clock.at(this.steps.clock.now() + this.steps.rng.int(5, 250), 'stream poll', () => {
      this.wanted = false;
      this.poll().catch((e: unknown) => {
        this.steps.log(`stream poll failed: ${String(e)}`);
        this.wake();
      });
    });
  }

  private async poll(): Promise<void> {
    if (this.busy) return this.wake();
    this.busy = true;
    try {
      await this.steps.invoke(
        'stream-poll',
        async () => {
          await this.steps.gate('stream read');
          const records = await this.steps.io(() => this.reader.read());
          this.backlog.push(...records.filter((r) => passesFanoutFilter(r)));
        },
        { faults: false },
      );
      while (this.backlog.length > 0) {
        const batch = this.backlog.slice(0, BATCH);
        const done = await this.run(batch);
        this.backlog.splice(0, done);
      }
    } finally {
      this.busy = false;
    }
  }

  /** Runs a batch until some prefix of it succeeded; returns how many records are done. */
  private async run(batch: DynamoDBRecord[]): Promise<number> {
    for (let size = batch.length; ;) {
      const part = batch.slice(0, size);
      const killAt = this.steps.rng.chance(this.faults().kill) ? this.steps.rng.int(1, 12) : null;
      const result = await this.steps
        .invoke('fanout', () => this.handler({ Records: part }), { killAt })
        .catch((e: unknown) => {
          this.steps.log(`fanout failed its whole batch: ${String(e)}`);
          return null;
        });
      // Killed, or failed as a whole: bisected and retried, as bisectBatchOnError does.
      if (result === null || result instanceof Killed) {
        size = Math.max(1, Math.ceil(size / 2));
        continue;
      }
      const failed = result.batchItemFailures.map((f) => f.itemIdentifier);
      if (failed.length > 0) {
        const first = part.findIndex((r) => failed.includes(r.dynamodb?.SequenceNumber ?? ''));
        if (first > 0) return first;
        await this.steps.clock.sleep(this.steps.rng.int(100, 2000), 'stream retry');
        continue;
      }
      if (this.steps.rng.chance(this.faults().streamTwice)) {
        this.steps.log(`stream batch of ${part.length} runs again`);
        this.repeats.batches++;
        await this.steps.invoke('fanout', () => this.handler({ Records: part }), {}).catch(() => undefined);
      }
      return part.length;
    }
  }
}
