import { PutItemCommand, QueryCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { logger } from '../../shared/logger';
import { localClient } from './dynamodb-local';

/**
 * Where the local stream poller keeps its position: one item per shard, in the table whose
 * stream it reads. DynamoDB Local keeps stream records across restarts (DYNAMODB_DATA_DIR)
 * but no reader position; in AWS, Lambda's event source keeps it. Local only: nothing under
 * functions/ or shared/ imports this module.
 */
export const STREAM_CHECKPOINT_PK = 'LOCAL#STREAM';

export const streamCheckpointKey = (shardId: string) => ({ pk: STREAM_CHECKPOINT_PK, sk: shardId });

export interface StreamCheckpoints {
  /** The last fully processed sequence number of each shard that has one. */
  load(): Promise<Map<string, string>>;
  save(shardId: string, sequenceNumber: string): Promise<void>;
  close(): void;
}

/** True for the stream record of a checkpoint write, so the poller never checkpoints because of its own writes. */
export function isCheckpointRecord(record: DynamoDBRecord): boolean {
  return record.dynamodb?.Keys?.pk?.S === STREAM_CHECKPOINT_PK;
}

/**
 * Its own client, not the app's: the local stack wakes the poller after every write made
 * through the app's client, and a checkpoint write must not count as new work.
 */
export function dynamoStreamCheckpoints(endpoint: string, tableName: string): StreamCheckpoints {
  const client = localClient(endpoint);
  return {
    async load() {
      const positions = new Map<string, string>();
      let start: Record<string, AttributeValue> | undefined;
      do {
        const out = await client.send(
          new QueryCommand({
            TableName: tableName,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': { S: STREAM_CHECKPOINT_PK } },
            ConsistentRead: true,
            ExclusiveStartKey: start,
          }),
        );
        for (const item of out.Items ?? []) {
          const shardId = item.sk?.S;
          const sequenceNumber = item.sequence_number?.S;
          if (shardId && sequenceNumber) positions.set(shardId, sequenceNumber);
        }
        start = out.LastEvaluatedKey;
      } while (start);
      return positions;
    },
    async save(shardId, sequenceNumber) {
      const key = streamCheckpointKey(shardId);
      await client.send(
        new PutItemCommand({
          TableName: tableName,
          Item: {
            pk: { S: key.pk },
            sk: { S: key.sk },
            entity: { S: 'stream_checkpoint' },
            sequence_number: { S: sequenceNumber },
            updated_at: { S: new Date().toISOString() },
          },
        }),
      );
    },
    close: () => client.destroy(),
  };
}

/**
 * Checkpoint writes off the read path: `save` notes a shard's position; the latest noted
 * positions are written at most every `everyMs`, one write at a time. A failed write is
 * logged and its position written with the next (a later one wins). `flush` writes what is
 * noted and waits.
 */
export function behindTheReads(
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
