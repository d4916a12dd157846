import {
  DescribeStreamCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type DynamoDBStreamsClient,
} from '@aws-sdk/client-dynamodb-streams';
import { logger } from '../../shared/logger';

/** Records per read (Lambda's default batch size for a stream is 100). */
export const BATCH_SIZE = 100;
/** How often the stream is asked for shards it did not have (a shard splits, a table is made again). */
const DISCOVER_EVERY_MS = 1000;
/**
 * GetShardIterator's answers for a checkpoint it cannot resume from: trimmed (older than
 * the stream keeps), an unknown shard, a malformed sequence number, and DynamoDB Local's
 * answer to a sequence number its shard does not hold (InternalFailure).
 */
const UNUSABLE_CHECKPOINT = new Set([
  'TrimmedDataAccessException',
  'ResourceNotFoundException',
  'ValidationException',
  'InternalFailure',
]);

/**
 * Every shard of a stream and where its reader stands: from `positions` (the last record read of
 * each shard, from a checkpoint, then advanced by the poller), else from the shard's start
 * (TRIM_HORIZON). A shard whose iterator runs out (it closed and was read to its end) is finished.
 */
export class StreamShards {
  readonly #iterators = new Map<string, string | undefined>();
  readonly #finished = new Set<string>();
  #discoveredAt = 0;

  constructor(
    private readonly streams: DynamoDBStreamsClient,
    private readonly streamArn: string,
    /** Shared with the poller, which advances it after each batch of a shard has passed. */
    readonly positions: Map<string, string>,
  ) {}

  /** Asks for the stream's shards when it has not lately, and opens an iterator on each new one. */
  async discover(): Promise<void> {
    if (Date.now() - this.#discoveredAt <= DISCOVER_EVERY_MS) return;
    const description = await this.streams.send(new DescribeStreamCommand({ StreamArn: this.streamArn }));
    for (const shard of description.StreamDescription?.Shards ?? []) {
      const id = shard.ShardId as string;
      if (this.#iterators.has(id) || this.#finished.has(id)) continue;
      this.#iterators.set(id, await this.#iteratorOf(id));
    }
    this.#discoveredAt = Date.now();
  }

  /** Iterators expired: each shard is opened again after its last record read (positions), not from its start. */
  reopen(): void {
    this.#iterators.clear();
    this.#discoveredAt = 0;
  }

  /** The open shards' ids, in the order they were found. */
  *open(): Iterable<string> {
    for (const [shardId, iterator] of this.#iterators) {
      if (iterator) yield shardId;
      else {
        this.#iterators.delete(shardId);
        this.#finished.add(shardId);
      }
    }
  }

  /** The next records of a shard (up to BATCH_SIZE), moving its iterator past them. */
  async read(shardId: string) {
    const iterator = this.#iterators.get(shardId);
    const out = await this.streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: BATCH_SIZE }));
    this.#iterators.set(shardId, out.NextShardIterator);
    return out.Records ?? [];
  }

  async #iteratorOf(shardId: string): Promise<string | undefined> {
    const after = this.positions.get(shardId);
    if (after) {
      try {
        const it = await this.streams.send(
          new GetShardIteratorCommand({
            StreamArn: this.streamArn,
            ShardId: shardId,
            ShardIteratorType: 'AFTER_SEQUENCE_NUMBER',
            SequenceNumber: after,
          }),
        );
        return it.ShardIterator;
      } catch (err) {
        if (!UNUSABLE_CHECKPOINT.has((err as Error).name)) throw err;
        logger.warn('Stream checkpoint unusable, reading the shard from its start', {
          shard_id: shardId,
          sequence_number: after,
          error: err as Error,
        });
        this.positions.delete(shardId);
      }
    }
    const it = await this.streams.send(
      new GetShardIteratorCommand({ StreamArn: this.streamArn, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' }),
    );
    return it.ShardIterator;
  }
}
