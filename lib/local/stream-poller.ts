import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { logger } from '../../shared/logger';
import { passesFanoutFilter } from '../../shared/stream-filters';
import type { ChaosDraws } from './chaos';
import { localClient } from './dynamodb-local';
import { dynamoStreamCheckpoints, isCheckpointRecord, type StreamCheckpoints } from './stream-checkpoint';

export interface StreamPoller {
  /** Polls now: a write just committed (see watchWrites in ./stack.ts). */
  wake(): void;
  stop(): Promise<void>;
}

const RETRIES_BEFORE_ERROR = 5;
/**
 * After a wake-up, empty polls this many times more before falling back to `idleMs`, in case
 * a record shows a little after its write returns (on DynamoDB Local it shows at once: the
 * latency benchmark's floor finds it on its first read, every time).
 */
const EAGER_POLLS = 2;
/** Between polls of an idle stream: Lambda's event source reads each shard four times a second. */
const IDLE_POLL_MS = 250;
/** Records per read and per fan-out batch (Lambda's default batch size for a stream is 100). */
const BATCH_SIZE = 100;
const EAGER_PAUSE_MS = 5;
/** A shard's position is written at most this often, behind the reads, not between them. */
const CHECKPOINT_EVERY_MS = 250;
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

/** The SDK's stream record in the shape Lambda hands to a stream-triggered function. */
export function toLambdaRecord(r: _Record, streamArn: string): DynamoDBRecord {
  const d = r.dynamodb ?? {};
  return {
    eventID: r.eventID,
    eventName: r.eventName as DynamoDBRecord['eventName'],
    eventVersion: r.eventVersion,
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    eventSourceARN: streamArn,
    dynamodb: {
      Keys: d.Keys as never,
      NewImage: d.NewImage as never,
      OldImage: d.OldImage as never,
      SequenceNumber: d.SequenceNumber,
      SizeBytes: d.SizeBytes,
      StreamViewType: d.StreamViewType,
      ApproximateCreationDateTime: d.ApproximateCreationDateTime
        ? d.ApproximateCreationDateTime.getTime() / 1000
        : undefined,
    },
  };
}

/**
 * Lambda's DynamoDB stream event source, locally: follows every shard of the table's
 * stream, applies the same filter patterns as the cloud event source, and invokes the
 * handler in batches. A partial batch failure is retried from the first failed record (as
 * Lambda does) until it passes: with no dead-letter queue locally, nothing is skipped.
 *
 * Like Lambda's, it keeps its position: after each batch of a shard it stores the last
 * sequence number in the table (./stream-checkpoint.ts) and resumes after it on the next
 * start, so data kept across restarts (DYNAMODB_DATA_DIR) is not fanned out again. Shards
 * without a checkpoint are read from their start (TRIM_HORIZON).
 *
 * DynamoDB Streams has no long poll, and polling DynamoDB Local every few milliseconds
 * costs it a core. So the poller reads when woken (the local stack wakes it after each
 * table write made in its process), reads again at once while a read comes back full or
 * when a wake-up came during the read, and otherwise polls every `idleMs` for writes made by
 * other processes: by default 250 ms, as Lambda polls each shard four times a second. Each
 * table request it spares is one DynamoDB Local serves the pipeline instead (an idle stack's
 * polls are most of its CPU): the stream stage of a delivery's latency is mostly the
 * emulator's queue.
 *
 * Positions are written behind the reads (at most one write per CHECKPOINT_EVERY_MS), not
 * between a batch and the next read, and the last ones when it stops. A crash loses at most
 * that much of its position: those records are read and fanned out again, which creates
 * nothing twice (delivery ids derive from event and endpoint; only never-attempted rows
 * are sent again, and the consumer sends nothing for a row past the message's attempt).
 */
export async function startStreamPoller(opts: {
  endpoint: string;
  tableName: string;
  handler: (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>;
  idleMs?: number;
  /** Chaos mode (./chaos.ts): a batch that succeeded sometimes runs again, whole. */
  chaos?: ChaosDraws;
}): Promise<StreamPoller> {
  const ddb = localClient(opts.endpoint);
  const table = await ddb.send(new DescribeTableCommand({ TableName: opts.tableName }));
  ddb.destroy();
  const streamArn = table.Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`table ${opts.tableName} has no stream`);
  const streams = new DynamoDBStreamsClient({
    endpoint: opts.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const idleMs = opts.idleMs ?? IDLE_POLL_MS;
  let running = true;
  let eager = 0;
  // A write committed since the current read began: its record may have been missed.
  let dirty = false;
  let wakeUp: (() => void) | undefined;
  const wake = () => {
    eager = EAGER_POLLS;
    dirty = true;
    wakeUp?.();
  };
  const pause = (delay: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, delay);
      function done() {
        clearTimeout(timer);
        wakeUp = undefined;
        resolve();
      }
      wakeUp = done;
    });
  const iterators = new Map<string, string | undefined>();
  const finished = new Set<string>();
  const store = dynamoStreamCheckpoints(opts.endpoint, opts.tableName);
  const checkpoints = behindTheReads(store, CHECKPOINT_EVERY_MS);
  // The last record read of each shard: stored checkpoints, then advanced batch by batch.
  let positions: Map<string, string>;
  try {
    positions = await store.load();
  } catch (err) {
    store.close();
    streams.destroy();
    throw err;
  }

  const iteratorOf = async (shardId: string): Promise<string | undefined> => {
    const after = positions.get(shardId);
    if (after) {
      try {
        const it = await streams.send(
          new GetShardIteratorCommand({
            StreamArn: streamArn,
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
        positions.delete(shardId);
      }
    }
    const it = await streams.send(
      new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' }),
    );
    return it.ShardIterator;
  };

  const discoverShards = async () => {
    const description = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
    for (const shard of description.StreamDescription?.Shards ?? []) {
      const id = shard.ShardId as string;
      if (iterators.has(id) || finished.has(id)) continue;
      iterators.set(id, await iteratorOf(id));
    }
  };

  /**
   * Hands the records to the fan-out until every one has passed; true when they have, false
   * when the poller is stopping first (the checkpoint then stays before them). Unlike
   * Lambda, which gives up after its retries into a dead-letter queue, the local stack has
   * no such queue, so it never skips an accepted event: it keeps trying, up to every 5 s.
   */
  const deliver = async (records: DynamoDBRecord[]): Promise<boolean> => {
    let pending = records;
    let ranTwice = false;
    for (let attempt = 0; pending.length > 0; attempt++) {
      const result = await opts.handler({ Records: pending }).catch((err: unknown) => {
        logger.error('Fan-out failed a whole batch', { error: err as Error });
        return { batchItemFailures: [{ itemIdentifier: pending[0]?.dynamodb?.SequenceNumber ?? '' }] };
      });
      const failedSeqs = new Set(result.batchItemFailures.map((f) => f.itemIdentifier));
      const firstFailed = pending.findIndex((r) => failedSeqs.has(r.dynamodb?.SequenceNumber ?? ''));
      if (firstFailed < 0) {
        // Lambda runs a batch again when its invocation timed out after the work was done: every record of it.
        if (ranTwice || !opts.chaos?.streamTwice()) return true;
        ranTwice = true;
        pending = records;
        continue;
      }
      if (attempt >= RETRIES_BEFORE_ERROR)
        logger.error('Fan-out keeps failing on stream records; retrying', {
          count: pending.length - firstFailed,
          attempt,
        });
      if (!running) return false;
      pending = pending.slice(firstFailed);
      await new Promise((r) => setTimeout(r, Math.min(5000, 50 * 2 ** attempt)));
    }
    return true;
  };

  const loop = async () => {
    let lastDiscovery = 0;
    while (running) {
      try {
        if (Date.now() - lastDiscovery > 1000) {
          await discoverShards();
          lastDiscovery = Date.now();
        }
        let got = 0;
        let full = false;
        dirty = false;
        for (const [shardId, iterator] of iterators) {
          if (!iterator) {
            iterators.delete(shardId);
            finished.add(shardId);
            continue;
          }
          const out = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: BATCH_SIZE }));
          iterators.set(shardId, out.NextShardIterator);
          const read = (out.Records ?? []).map((r) => toLambdaRecord(r, streamArn));
          full ||= read.length === BATCH_SIZE;
          const last = read.at(-1)?.dynamodb?.SequenceNumber;
          if (!last) continue;
          const records = read.filter(passesFanoutFilter);
          if (records.length > 0 && !(await deliver(records))) break;
          positions.set(shardId, last);
          // A batch of nothing but checkpoint writes is not checkpointed: saving it would write
          // the next such record, and the poller would feed itself forever. Resuming before
          // those records only re-reads them, and the filter drops them.
          if (read.every(isCheckpointRecord)) continue;
          checkpoints.save(shardId, last);
          got += read.length;
        }
        // Read again at once when a shard may hold more, or a write came during this read;
        // a wake-up whose record this read did not show gets a few more reads; else, idle.
        if (got > 0) eager = 0;
        if (full || dirty) continue;
        if (eager > 0) {
          eager--;
          await pause(EAGER_PAUSE_MS);
        } else await pause(idleMs);
      } catch (err) {
        if (!running) break;
        if (err instanceof ExpiredIteratorException) {
          // Resumes each shard after its last record read (positions), not from its start.
          iterators.clear();
          lastDiscovery = 0;
        } else logger.error('Local stream poll failed', { error: err as Error });
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };
  const loopDone = loop();
  return {
    wake,
    stop: async () => {
      running = false;
      wakeUp?.();
      await loopDone;
      streams.destroy();
      await checkpoints.flush();
      store.close();
    },
  };
}

/**
 * Checkpoint writes off the read path: `save` notes a shard's position; the latest noted
 * positions are written at most every `everyMs`, one write at a time. A failed write is
 * logged and its position written with the next (a later one wins). `flush` writes what is
 * noted and waits.
 */
function behindTheReads(
  store: StreamCheckpoints,
  everyMs: number,
): { save(shardId: string, sequenceNumber: string): void; flush(): Promise<void> } {
  const noted = new Map<string, string>();
  let writing: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const writeNoted = async () => {
    const batch = [...noted];
    noted.clear();
    for (const [shardId, sequenceNumber] of batch) {
      try {
        await store.save(shardId, sequenceNumber);
      } catch (err) {
        if (!noted.has(shardId)) noted.set(shardId, sequenceNumber);
        logger.warn('Stream checkpoint write failed; it is written with the next', {
          shard_id: shardId,
          error: err as Error,
        });
      }
    }
  };
  const start = () => {
    timer = undefined;
    writing = writeNoted().finally(() => {
      writing = undefined;
      if (noted.size > 0) timer ??= setTimeout(start, everyMs);
    });
  };
  return {
    save(shardId, sequenceNumber) {
      noted.set(shardId, sequenceNumber);
      if (!writing) timer ??= setTimeout(start, everyMs);
    },
    async flush() {
      clearTimeout(timer);
      timer = undefined;
      await writing;
      if (noted.size > 0) await writeNoted();
    },
  };
}
