import { DescribeTableCommand, GetItemCommand, PutItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { localClient } from '../../lib/local/dynamodb-local';
import { STREAM_CHECKPOINT_PK, streamCheckpointKey } from '../../lib/local/stream-checkpoint';
import { startStreamPoller, type StreamPoller } from '../../lib/local/stream-poller';
import { newEvent } from '../../shared/domain/events';
import { logger } from '../../shared/logger';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { eventItem } from '../../shared/store/events';
import { testEndpoint, useFreshTable } from '../helpers/table';

const SHOP = 'shop_01jd0000000000000000000000';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Every record of the table's stream, oldest first, as (shard, sequence number, item key). */
async function streamRecords(tableName: string): Promise<{ shardId: string; seq: string; pk: string; sk: string }[]> {
  const ddb = localClient(testEndpoint());
  const streams = new DynamoDBStreamsClient({
    endpoint: testEndpoint(),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    const arn = (await ddb.send(new DescribeTableCommand({ TableName: tableName }))).Table?.LatestStreamArn;
    const shards = (await streams.send(new DescribeStreamCommand({ StreamArn: arn }))).StreamDescription?.Shards ?? [];
    const out: { shardId: string; seq: string; pk: string; sk: string }[] = [];
    for (const shard of shards) {
      const shardId = shard.ShardId as string;
      let it = (
        await streams.send(
          new GetShardIteratorCommand({ StreamArn: arn, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' }),
        )
      ).ShardIterator;
      while (it) {
        const page = await streams.send(new GetRecordsCommand({ ShardIterator: it }));
        for (const r of page.Records ?? [])
          out.push({
            shardId,
            seq: r.dynamodb?.SequenceNumber ?? '',
            pk: r.dynamodb?.Keys?.pk?.S ?? '',
            sk: r.dynamodb?.Keys?.sk?.S ?? '',
          });
        if ((page.Records ?? []).length === 0) break; // an open shard never ends; stop at its tip
        it = page.NextShardIterator;
      }
    }
    return out;
  } finally {
    ddb.destroy();
    streams.destroy();
  }
}

async function checkpointOf(
  deps: Deps,
  shardId: string,
): Promise<{ sequence_number?: string; updated_at?: string } | undefined> {
  const key = streamCheckpointKey(shardId);
  const out = await deps.db.client.send(
    new GetItemCommand({
      TableName: deps.db.tableName,
      Key: { pk: { S: key.pk }, sk: { S: key.sk } },
      ConsistentRead: true,
    }),
  );
  return out.Item ? (unmarshall(out.Item) as { sequence_number?: string; updated_at?: string }) : undefined;
}

describe('local stream poller resumes from its checkpoint (DynamoDB Local)', () => {
  let deps: Deps;
  const running: StreamPoller[] = [];
  beforeEach(async () => {
    deps = await useFreshTable({ stream: true });
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((p) => p.stop()));
    jest.restoreAllMocks();
  });

  /** A poller whose handler records the id of every event it is given, in order. */
  async function poller(): Promise<{ seen: string[]; poller: StreamPoller }> {
    const seen: string[] = [];
    const handler = async (event: DynamoDBStreamEvent) => {
      for (const r of event.Records)
        seen.push(String(unmarshall(r.dynamodb?.NewImage as Record<string, AttributeValue>).id));
      return { batchItemFailures: [] };
    };
    const started = await startStreamPoller({
      endpoint: testEndpoint(),
      tableName: deps.db.tableName,
      handler,
      idleMs: 20,
    });
    running.push(started);
    return { seen, poller: started };
  }

  async function writeEvents(count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const event = newEvent(SHOP, 'call.completed', { id: `call_${i}` }, new Date());
      await deps.db.doc.put({ TableName: deps.db.tableName, Item: eventItem(event) });
      ids.push(event.id);
    }
    return ids;
  }

  async function stop(p: StreamPoller): Promise<void> {
    running.splice(running.indexOf(p), 1);
    await p.stop();
  }

  it('does not deliver old records again after a restart, and delivers new ones exactly once', async () => {
    const first = await poller();
    const old = await writeEvents(3);
    await waitFor(() => first.seen.length >= 3, 'the first poller to handle the events');
    await stop(first.poller);
    expect(first.seen).toEqual(old);

    const second = await poller();
    const fresh = await writeEvents(2);
    await waitFor(() => second.seen.length >= 2, 'the second poller to handle the new events');
    await sleep(300); // many idle polls: time for a replay or a duplicate to show up
    expect(second.seen).toEqual(fresh);
  });

  it('moves the checkpoint past records the filter drops, but not for its own checkpoint writes', async () => {
    const { seen } = await poller();
    const [id] = await writeEvents(1);
    await waitFor(() => seen.length === 1, 'the event to be handled');
    // Not an event item: the fan-out filter drops it, yet the position must pass it.
    await deps.db.client.send(
      new PutItemCommand({
        TableName: deps.db.tableName,
        Item: { pk: { S: `SHOP#${SHOP}` }, sk: { S: 'PROFILE' }, entity: { S: 'shop' } },
      }),
    );
    const dropped = (await streamRecords(deps.db.tableName)).find((r) => r.sk === 'PROFILE');
    if (!dropped) throw new Error('no stream record for the shop item');
    // At or past it: a checkpoint write racing the item may share its batch and come after it.
    await waitFor(
      async () => BigInt((await checkpointOf(deps, dropped.shardId))?.sequence_number ?? '0') >= BigInt(dropped.seq),
      'the checkpoint to pass the dropped record',
    );
    await sleep(200);
    const records = await streamRecords(deps.db.tableName);
    const checkpoint = await checkpointOf(deps, dropped.shardId);
    // The records after the checkpoint are only the poller's own checkpoint writes.
    const after = records.filter(
      (r) => r.shardId === dropped.shardId && BigInt(r.seq) > BigInt(checkpoint?.sequence_number ?? '0'),
    );
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((r) => r.pk === STREAM_CHECKPOINT_PK)).toBe(true);
    expect(seen).toEqual([id]);
  });

  it('stops writing checkpoints once idle, even when woken again and again', async () => {
    const { seen, poller: p } = await poller();
    const ids = await writeEvents(2);
    await waitFor(() => seen.length === 2, 'the events to be handled');
    const last = (await streamRecords(deps.db.tableName)).find((r) => r.sk === `EVT#${ids[1]}`);
    if (!last) throw new Error('no stream record for the second event');
    const shardId = last.shardId;
    // Settled: the batch holding the second event is checkpointed.
    await waitFor(
      async () => BigInt((await checkpointOf(deps, shardId))?.sequence_number ?? '0') >= BigInt(last.seq),
      'the last checkpoint write',
    );
    await sleep(100);
    const before = {
      checkpoint: await checkpointOf(deps, shardId),
      records: (await streamRecords(deps.db.tableName)).length,
    };
    expect(before.checkpoint?.updated_at).toEqual(expect.any(String));
    for (let i = 0; i < 10; i++) {
      p.wake();
      await sleep(60);
    }
    await sleep(300);
    expect(await checkpointOf(deps, shardId)).toEqual(before.checkpoint);
    expect((await streamRecords(deps.db.tableName)).length).toBe(before.records);
    expect(seen).toHaveLength(2);
  });

  it('writes its position behind the reads: a checkpoint write per 250 ms at most, the last on stop', async () => {
    let batches = 0;
    const seen: string[] = [];
    const handler = async (event: DynamoDBStreamEvent) => {
      batches++;
      for (const r of event.Records)
        seen.push(String(unmarshall(r.dynamodb?.NewImage as Record<string, AttributeValue>).id));
      return { batchItemFailures: [] };
    };
    const p = await startStreamPoller({ endpoint: testEndpoint(), tableName: deps.db.tableName, handler, idleMs: 20 });
    running.push(p);
    const ids: string[] = [];
    const started = Date.now();
    for (let i = 0; i < 12; i++) {
      ids.push(...(await writeEvents(1)));
      p.wake();
      await waitFor(() => seen.length === ids.length, 'the event to be handled');
    }
    await stop(p);
    const elapsed = Date.now() - started;
    expect(seen).toEqual(ids);
    expect(batches).toBe(12);
    const records = await streamRecords(deps.db.tableName);
    const checkpointWrites = records.filter((r) => r.pk === STREAM_CHECKPOINT_PK);
    expect(checkpointWrites.length).toBeGreaterThan(0);
    // One per batch, as before, would be 12 (in about 400 ms here).
    expect(checkpointWrites.length).toBeLessThanOrEqual(Math.ceil(elapsed / 250) + 1);
    // Stopped: the stored position is the last event's.
    const last = records.find((r) => r.sk === `EVT#${ids.at(-1)}`);
    if (!last) throw new Error('no stream record for the last event');
    expect(BigInt((await checkpointOf(deps, last.shardId))?.sequence_number ?? '0')).toBeGreaterThanOrEqual(
      BigInt(last.seq),
    );
  });

  it('reads a shard from its start, with a warning, when its checkpoint cannot be resumed from', async () => {
    const ids = await writeEvents(2);
    const [first] = await streamRecords(deps.db.tableName);
    if (!first) throw new Error('no stream record');
    // Well formed, but past anything the shard holds.
    const key = streamCheckpointKey(first.shardId);
    await deps.db.client.send(
      new PutItemCommand({
        TableName: deps.db.tableName,
        Item: { pk: { S: key.pk }, sk: { S: key.sk }, sequence_number: { S: '999999999999999999999' } },
      }),
    );
    const warn = jest.spyOn(logger, 'warn');
    const { seen } = await poller();
    await waitFor(() => seen.length >= 2, 'the events to be read from the start');
    expect(seen).toEqual(ids);
    expect(warn).toHaveBeenCalledWith(
      'Stream checkpoint unusable, reading the shard from its start',
      expect.objectContaining({ shard_id: first.shardId }),
    );
  });
});
