import { DescribeTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord } from 'aws-lambda';
import { ensureTable, localClient } from '../lib/local/dynamodb-local';
import { toLambdaRecord } from '../lib/local/stream-poller';
import type { Dynamo } from '../shared/store/client';
import type { FaultRates } from './faults';
import type { Steps } from './steps';

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'BatchWriteItem']);

const awsError = (name: string, message: string, status: number, extra: object = {}) =>
  Object.assign(
    new Error(message),
    { name, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status } },
    extra,
  );

/** What a request is about, for the trace: its keys, or its first item's. */
function describe(input: Record<string, unknown>): string {
  const key = (input.Key ?? (input.Item as Record<string, unknown> | undefined)) as Record<string, unknown> | undefined;
  if (key?.sk) return String(key.sk);
  const items = input.TransactItems as Record<string, { Key?: { sk?: string }; Item?: { sk?: string } }>[] | undefined;
  if (items) return items.map((t) => Object.values(t)[0]?.Key?.sk ?? Object.values(t)[0]?.Item?.sk).join(',');
  return typeof input.KeyConditionExpression === 'string' ? 'query' : '';
}

/**
 * A change made to every table request before it is sent: how the harness's own tests break
 * the engine on purpose (a condition loosened) to show that the checks catch it. Never set by a run.
 */
export const tampering: { request?: (operation: string, input: Record<string, unknown>) => void } = {};

/**
 * Puts every request of the table's document client through a gate, and injects what DynamoDB
 * may do to it: a refusal before the write (throttled, or a 500), a conflict that cancels a
 * transaction, and a write that committed but whose answer never came back.
 */
export function gateTable(db: Dynamo, steps: Steps, faults: () => FaultRates, onWrite: () => void): void {
  db.doc.middlewareStack.add(
    (next, context) => async (args) => {
      const op = (context.commandName ?? '').replace(/Command$/, '');
      const input = args.input as Record<string, unknown>;
      const label = `table ${op} ${describe(input)}`;
      await steps.gate(label);
      tampering.request?.(op, input);
      const f = steps.invocation()?.faults ? faults() : undefined;
      const rng = steps.rng;
      if (f && rng.chance(f.tableRefused)) {
        steps.log(`${label}: refused (throttled)`);
        throw rng.chance(0.5)
          ? awsError('ProvisionedThroughputExceededException', 'Rate of requests exceeds the allowed throughput.', 400)
          : awsError('InternalServerError', 'Internal server error', 500);
      }
      if (f && op === 'TransactWriteItems' && rng.chance(f.tableConflict)) {
        steps.log(`${label}: transaction conflict`);
        const reasons = (input.TransactItems as unknown[]).map(() => ({ Code: 'TransactionConflict' }));
        throw awsError('TransactionCanceledException', 'Transaction cancelled', 400, { CancellationReasons: reasons });
      }
      const out = await steps.io(() => next(args));
      if (WRITES.has(op)) onWrite();
      if (f && WRITES.has(op) && rng.chance(f.tableAnswerLost)) {
        steps.log(`${label}: committed, answer lost`);
        throw Object.assign(awsError('TimeoutError', 'socket hang up', 500), { code: 'ECONNRESET' });
      }
      return out;
    },
    { step: 'initialize', name: 'simGate' },
  );
}

/** The table's stream, read as Lambda's event source reads it: every shard, in order. */
export class StreamReader {
  private readonly client: DynamoDBStreamsClient;
  private iterators = new Map<string, string | undefined>();
  private arn = '';

  constructor(
    private readonly endpoint: string,
    private readonly tableName: string,
  ) {
    this.client = new DynamoDBStreamsClient({
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    });
  }

  /** The records written since the last read, in order per shard. */
  async read(): Promise<DynamoDBRecord[]> {
    if (!this.arn) {
      const ddb = localClient(this.endpoint);
      const table = await ddb.send(new DescribeTableCommand({ TableName: this.tableName }));
      ddb.destroy();
      this.arn = table.Table?.LatestStreamArn ?? '';
    }
    const stream = await this.client.send(new DescribeStreamCommand({ StreamArn: this.arn }));
    const out: DynamoDBRecord[] = [];
    for (const shard of stream.StreamDescription?.Shards ?? []) {
      const id = shard.ShardId as string;
      if (!this.iterators.has(id)) {
        const it = await this.client.send(
          new GetShardIteratorCommand({ StreamArn: this.arn, ShardId: id, ShardIteratorType: 'TRIM_HORIZON' }),
        );
        this.iterators.set(id, it.ShardIterator);
      }
      for (let iterator = this.iterators.get(id); iterator;) {
        const page = await this.client.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
        out.push(...(page.Records ?? []).map((r) => toLambdaRecord(r, this.arn)));
        this.iterators.set(id, page.NextShardIterator);
        if ((page.Records ?? []).length === 0) break;
        iterator = page.NextShardIterator;
      }
    }
    return out;
  }

  close(): void {
    this.client.destroy();
  }
}

/**
 * The table of a process's runs, and its stream. Runs share it (each has its own shop), since
 * DynamoDB Local is slow on a table created after it has held many stream records; a run that
 * leaves deliveries open gets a fresh one, so that none of its rows wakes in the next run.
 */
export class SimTable {
  private count = 0;
  name = '';
  reader: StreamReader | undefined;

  constructor(
    readonly endpoint: string,
    private readonly prefix: string,
  ) {}

  /** The table for the next run, its stream read to the end (a run sees only its own records). */
  async ready(): Promise<{ name: string; reader: StreamReader }> {
    if (!this.reader) {
      this.name = `${this.prefix}-${++this.count}`;
      await ensureTable(this.endpoint, this.name);
      this.reader = new StreamReader(this.endpoint, this.name);
    }
    await this.reader.read();
    return { name: this.name, reader: this.reader };
  }

  async renew(): Promise<void> {
    if (!this.reader) return;
    this.reader.close();
    this.reader = undefined;
    const ddb = localClient(this.endpoint);
    try {
      await ddb.send(new DeleteTableCommand({ TableName: this.name }));
    } finally {
      ddb.destroy();
    }
  }
}
