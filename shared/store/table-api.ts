import type {
  BatchGetCommandInput,
  BatchGetCommandOutput,
  BatchWriteCommandInput,
  BatchWriteCommandOutput,
  DeleteCommandInput,
  DeleteCommandOutput,
  GetCommandInput,
  GetCommandOutput,
  PutCommandInput,
  PutCommandOutput,
  QueryCommandInput,
  QueryCommandOutput,
  ScanCommandInput,
  ScanCommandOutput,
  TransactWriteCommandInput,
  TransactWriteCommandOutput,
  UpdateCommandInput,
  UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { AwsApi } from '../aws/aws-call';

/**
 * The table's document client: the operations of @aws-sdk/lib-dynamodb's commands the stores
 * use, with their inputs and outputs, over one signed request each (shared/aws/aws-call.ts).
 * Values are marshalled and unmarshalled in the same places and with the same options as the
 * SDK's document client did here; errors are the service's, as the SDK's exceptions have them
 * (a refused condition's `Item` and a cancelled transaction's reasons stay marshalled).
 * Binary attributes (B, BS) are not supported: the table has none.
 */

/** Answers without the SDK's `$metadata`, which no store reads. */
type Out<T> = Omit<T, '$metadata'>;
type Item = Record<string, unknown>;

/** One request as it settled: what the store asked (document values), and the answer or the error. */
export type TableObserver = (operation: string, input: object, outcome: { output: unknown } | { error: unknown }) => void;

const MARSHALL = { removeUndefinedValues: true, convertClassInstanceToMap: false };
const toAttrs = (values: Item | undefined) => (values === undefined ? undefined : marshall(values, MARSHALL));
const fromAttrs = (attrs: unknown) => (attrs === undefined ? undefined : unmarshall(attrs as Parameters<typeof unmarshall>[0]));
const mapValues = <A, B>(record: Record<string, A> | undefined, f: (a: A) => B) =>
  record === undefined ? undefined : Object.fromEntries(Object.entries(record).map(([k, v]) => [k, f(v)]));
/** The answer (freshly parsed, so changed in place) with its `fields` unmarshalled where present, as the SDK's document client leaves them. */
function unmarshallFields<T>(out: Record<string, unknown>, ...fields: string[]): T {
  for (const field of fields) if (out[field] !== undefined) out[field] = fromAttrs(out[field]);
  return out as T;
}

interface WriteRequest {
  PutRequest?: { Item?: Item };
  DeleteRequest?: { Key?: Item };
}
/** A batch write's request, (un)marshalled by `f`. */
const writeRequest = (r: WriteRequest, f: (x: Item | undefined) => unknown) => ({
  ...r,
  ...(r.PutRequest ? { PutRequest: { ...r.PutRequest, Item: f(r.PutRequest.Item) } } : {}),
  ...(r.DeleteRequest ? { DeleteRequest: { ...r.DeleteRequest, Key: f(r.DeleteRequest.Key) } } : {}),
});

/** The parts of a single-item request that hold values: the key or the item, and the expression's values. */
const itemInput = <T extends { Key?: Item; Item?: Item; ExpressionAttributeValues?: Item }>(input: T) => ({
  ...input,
  ...(input.Key ? { Key: toAttrs(input.Key) } : {}),
  ...(input.Item ? { Item: toAttrs(input.Item) } : {}),
  ...(input.ExpressionAttributeValues ? { ExpressionAttributeValues: toAttrs(input.ExpressionAttributeValues) } : {}),
});

export class TableClient {
  private readonly observers = new Set<TableObserver>();

  constructor(
    /** The signed-request API the client sends on (benchmarks wrap its `call` to count requests and capacity). */
    readonly api: AwsApi,
  ) {}

  /** Calls `observer` after every request of this client settles; returns the undo. */
  observe(observer: TableObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  destroy(): void {
    this.api.destroy();
  }

  async get(input: GetCommandInput): Promise<Out<GetCommandOutput>> {
    return this.send('GetItem', input, itemInput(input), (out) => unmarshallFields(out, 'Item'));
  }

  async put(input: PutCommandInput): Promise<Out<PutCommandOutput>> {
    return this.send('PutItem', input, itemInput(input), (out) => unmarshallFields(out, 'Attributes'));
  }

  async update(input: UpdateCommandInput): Promise<Out<UpdateCommandOutput>> {
    return this.send('UpdateItem', input, itemInput(input), (out) => unmarshallFields(out, 'Attributes'));
  }

  async delete(input: DeleteCommandInput): Promise<Out<DeleteCommandOutput>> {
    return this.send('DeleteItem', input, itemInput(input), (out) => unmarshallFields(out, 'Attributes'));
  }

  async query(input: QueryCommandInput): Promise<Out<QueryCommandOutput>> {
    return this.page('Query', input);
  }

  async scan(input: ScanCommandInput): Promise<Out<ScanCommandOutput>> {
    return this.page('Scan', input);
  }

  async batchGet(input: BatchGetCommandInput): Promise<Out<BatchGetCommandOutput>> {
    const RequestItems = mapValues(input.RequestItems, (r) => ({ ...r, ...(r.Keys ? { Keys: r.Keys.map((k) => toAttrs(k)) } : {}) }));
    return this.send('BatchGetItem', input, { ...input, RequestItems }, (out: { Responses?: Record<string, Item[]>; UnprocessedKeys?: Record<string, { Keys?: Item[] }> }) => {
      if (out.Responses) out.Responses = mapValues(out.Responses, (items) => items.map((i) => fromAttrs(i) as Item));
      if (out.UnprocessedKeys) out.UnprocessedKeys = mapValues(out.UnprocessedKeys, (r) => ({ ...r, ...(r.Keys ? { Keys: r.Keys.map((k) => fromAttrs(k) as Item) } : {}) }));
      return out as Out<BatchGetCommandOutput>;
    });
  }

  async batchWrite(input: BatchWriteCommandInput): Promise<Out<BatchWriteCommandOutput>> {
    const RequestItems = mapValues(input.RequestItems, (requests) => requests.map((r) => writeRequest(r, toAttrs)));
    return this.send('BatchWriteItem', input, { ...input, RequestItems }, (out: { UnprocessedItems?: Record<string, WriteRequest[]> }) => {
      if (out.UnprocessedItems) out.UnprocessedItems = mapValues(out.UnprocessedItems, (requests) => requests.map((r) => writeRequest(r, fromAttrs) as WriteRequest));
      return out as Out<BatchWriteCommandOutput>;
    });
  }

  async transactWrite(input: TransactWriteCommandInput): Promise<Out<TransactWriteCommandOutput>> {
    const TransactItems = input.TransactItems?.map((t) => ({
      ...t,
      ...(t.ConditionCheck ? { ConditionCheck: itemInput(t.ConditionCheck) } : {}),
      ...(t.Put ? { Put: itemInput(t.Put) } : {}),
      ...(t.Delete ? { Delete: itemInput(t.Delete) } : {}),
      ...(t.Update ? { Update: itemInput(t.Update) } : {}),
    }));
    return this.send('TransactWriteItems', input, { ...input, TransactItems }, (out) => out);
  }

  private async page<I extends QueryCommandInput | ScanCommandInput>(operation: 'Query' | 'Scan', input: I) {
    const request = { ...itemInput(input), ...(input.ExclusiveStartKey ? { ExclusiveStartKey: toAttrs(input.ExclusiveStartKey) } : {}) };
    return this.send(operation, input, request, (out: { Items?: Item[] }) => {
      if (out.Items) out.Items = out.Items.map((i) => fromAttrs(i) as Item);
      return unmarshallFields<Out<QueryCommandOutput & ScanCommandOutput>>(out, 'LastEvaluatedKey');
    });
  }

  /** Sends the marshalled `request` and reads the answer with `read`; observers see the store's own `input` and what it gets back. */
  private async send<T, R = Record<string, unknown>>(operation: string, input: object, request: object, read: (out: R) => T): Promise<T> {
    if (this.observers.size === 0) return read(await this.api.call<R>({ operation, input: request }));
    let outcome: { output: unknown } | { error: unknown };
    try {
      const output = read(await this.api.call<R>({ operation, input: request }));
      outcome = { output };
      return output;
    } catch (error) {
      outcome = { error };
      throw error;
    } finally {
      for (const observer of this.observers) observer(operation, input, outcome!);
    }
  }
}
