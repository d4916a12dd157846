import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient, ExpiredIteratorException, type _Record } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { logger } from '../../shared/logger';
import { passesFanoutFilter } from '../../shared/stream-filters';
import type { ChaosDraws } from './chaos';
import { localClient } from './dynamodb-local';
import { behindTheReads, dynamoStreamCheckpoints, isCheckpointRecord } from './stream-checkpoint';
import { BATCH_SIZE, StreamShards } from './stream-shards';

export interface StreamPollerOptions {
  endpoint: string;
  tableName: string;
  handler: (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>;
  idleMs?: number;
  /** Chaos mode (./chaos.ts): a batch that succeeded sometimes runs again, whole. */
  chaos?: ChaosDraws;
}

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
const EAGER_PAUSE_MS = 5;
/** A shard's position is written at most this often, behind the reads, not between them. */
const CHECKPOINT_EVERY_MS = 250;
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
export async function startStreamPoller(opts: StreamPollerOptions): Promise<StreamPoller> {
  const streamArn = await streamArnOf(opts.endpoint, opts.tableName);
  const streams = new DynamoDBStreamsClient({
    endpoint: opts.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const store = dynamoStreamCheckpoints(opts.endpoint, opts.tableName);
  let positions: Map<string, string>;
  try {
    positions = await store.load();
  } catch (err) {
    store.close();
    streams.destroy();
    throw err;
  }
  const shards = new StreamShards(streams, streamArn, positions);
  const checkpoints = behindTheReads(store, CHECKPOINT_EVERY_MS);
  const waits = wakeableWaits(opts.idleMs ?? IDLE_POLL_MS);
  let running = true;
  const fanOut = (records: DynamoDBRecord[]) => handUntilPassed(records, opts, () => running);

  /**
   * Reads every open shard once and hands what passes the filter to the fan-out; stops at a batch
   * the fan-out has not passed when the poller is stopping (its position stays before it).
   */
  const readAll = async (): Promise<{ got: number; full: boolean }> => {
    let got = 0;
    let full = false;
    for (const shardId of shards.open()) {
      const read = (await shards.read(shardId)).map((r) => toLambdaRecord(r, streamArn));
      full ||= read.length === BATCH_SIZE;
      const last = read.at(-1)?.dynamodb?.SequenceNumber;
      if (!last) continue;
      const records = read.filter(passesFanoutFilter);
      if (records.length > 0 && !(await fanOut(records))) break;
      positions.set(shardId, last);
      // A batch of nothing but checkpoint writes is not checkpointed: saving it would write
      // the next such record, and the poller would feed itself forever. Resuming before
      // those records only re-reads them, and the filter drops them.
      if (read.every(isCheckpointRecord)) continue;
      checkpoints.save(shardId, last);
      got += read.length;
    }
    return { got, full };
  };

  const loop = async () => {
    while (running) {
      try {
        await shards.discover();
        waits.reading();
        const { got, full } = await readAll();
        await waits.afterRead(got, full);
      } catch (err) {
        if (!running) break;
        if (err instanceof ExpiredIteratorException) shards.reopen();
        else logger.error('Local stream poll failed', { error: err as Error });
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };
  const loopDone = loop();
  return {
    wake: waits.wake,
    stop: async () => {
      running = false;
      waits.interrupt();
      await loopDone;
      streams.destroy();
      await checkpoints.flush();
      store.close();
    },
  };
}

async function streamArnOf(endpoint: string, tableName: string): Promise<string> {
  const ddb = localClient(endpoint);
  const table = await ddb.send(new DescribeTableCommand({ TableName: tableName }));
  ddb.destroy();
  const streamArn = table.Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`table ${tableName} has no stream`);
  return streamArn;
}

/**
 * The poller's pauses between reads. It reads again at once when a shard may hold more or a
 * write came during the read (`dirty`); a wake-up whose record the read did not show gets a few
 * more reads (`eager`), EAGER_PAUSE_MS apart; otherwise it waits `idleMs` or until woken.
 */
function wakeableWaits(idleMs: number) {
  let eager = 0;
  // A write committed since the current read began: its record may have been missed.
  let dirty = false;
  let wakeUp: (() => void) | undefined;
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
  return {
    wake() {
      eager = EAGER_POLLS;
      dirty = true;
      wakeUp?.();
    },
    /** Ends the current pause (the poller is stopping). */
    interrupt: () => wakeUp?.(),
    reading() {
      dirty = false;
    },
    async afterRead(got: number, full: boolean) {
      if (got > 0) eager = 0;
      if (full || dirty) return;
      if (eager > 0) {
        eager--;
        await pause(EAGER_PAUSE_MS);
      } else await pause(idleMs);
    },
  };
}

/**
 * Hands the records to the fan-out until every one has passed; true when they have, false
 * when the poller is stopping first (the checkpoint then stays before them). Unlike
 * Lambda, which gives up after its retries into a dead-letter queue, the local stack has
 * no such queue, so it never skips an accepted event: it keeps trying, up to every 5 s.
 */
async function handUntilPassed(
  records: DynamoDBRecord[],
  opts: Pick<StreamPollerOptions, 'handler' | 'chaos'>,
  running: () => boolean,
): Promise<boolean> {
  let pending = records;
  let ranTwice = false;
  for (let attempt = 0; pending.length > 0; attempt++) {
    const firstFailed = await firstFailedOf(pending, opts.handler);
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
    if (!running()) return false;
    pending = pending.slice(firstFailed);
    await new Promise((r) => setTimeout(r, Math.min(5000, 50 * 2 ** attempt)));
  }
  return true;
}

/** Runs the handler on the batch: the index of its first failed record, -1 when all passed (a throw fails them all). */
async function firstFailedOf(records: DynamoDBRecord[], handler: StreamPollerOptions['handler']): Promise<number> {
  const result = await handler({ Records: records }).catch((err: unknown) => {
    logger.error('Fan-out failed a whole batch', { error: err as Error });
    return { batchItemFailures: [{ itemIdentifier: records[0]?.dynamodb?.SequenceNumber ?? '' }] };
  });
  const failedSeqs = new Set(result.batchItemFailures.map((f) => f.itemIdentifier));
  return records.findIndex((r) => failedSeqs.has(r.dynamodb?.SequenceNumber ?? ''));
}
