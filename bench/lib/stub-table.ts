import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { TABLE } from '../../shared/store/table';

/**
 * The DynamoDB side of the cold-start benchmark's loopback stub (bench/lib/aws-stub.ts): a
 * frozen copy of a seeded table, read as DynamoDB reads it (GetItem, BatchGetItem, Query on
 * the table or an index, with the key and filter expressions the stores use), while every
 * write is acknowledged and dropped. Each measured process thus finds the same items (the
 * job still pending, the idempotency key never taken) and its first invocation goes down the
 * path a real first request takes, not the 404 an empty table gives.
 */
export type Item = Record<string, AttributeValue>;
type Json = Record<string, unknown>;

const keyOf = (item: Item, partition: string, sort: string): string | null => {
  const p = item[partition]?.S;
  const s = item[sort]?.S;
  return p === undefined || s === undefined ? null : `${p}\u0000${s}`;
};

/** A comparable form of a scalar attribute: strings as they are, numbers as numbers; anything else does not compare. */
function scalar(v: AttributeValue | undefined): string | number | undefined {
  if (v?.S !== undefined) return v.S;
  if (v?.N !== undefined) return Number(v.N);
  return undefined;
}

type Condition = (item: Item) => boolean;

/**
 * Parses the `a = :v AND begins_with(b, :p) AND c BETWEEN :x AND :y AND attribute_not_exists(d)` subset of DynamoDB's
 * expressions, which is all the stores write in key conditions and filters. Anything else is
 * an error: a stub that silently ignored a clause would answer items DynamoDB would not.
 */
export function parseConditions(expression: string, names: Record<string, string> = {}, values: Item = {}): Condition {
  const name = (token: string) => names[token] ?? token;
  const value = (token: string) => {
    const v = values[token];
    if (!v) throw new Error(`stub table: no value for ${token}`);
    return scalar(v);
  };
  const clauses: Condition[] = [];
  let rest = expression.trim();
  while (rest.length > 0) {
    let m: RegExpMatchArray | null;
    if ((m = rest.match(/^begins_with\(\s*([#\w]+)\s*,\s*(:\w+)\s*\)/))) {
      const [attr, prefix] = [name(m[1] as string), String(value(m[2] as string))];
      clauses.push((item) => item[attr]?.S?.startsWith(prefix) === true);
    } else if ((m = rest.match(/^(attribute_exists|attribute_not_exists)\(\s*([#\w]+)\s*\)/))) {
      const [exists, attr] = [m[1] === 'attribute_exists', name(m[2] as string)];
      clauses.push((item) => (item[attr] !== undefined) === exists);
    } else if ((m = rest.match(/^([#\w]+)\s+BETWEEN\s+(:\w+)\s+AND\s+(:\w+)/))) {
      const [attr, low, high] = [name(m[1] as string), value(m[2] as string), value(m[3] as string)];
      clauses.push((item) => {
        const v = scalar(item[attr]);
        return v !== undefined && low !== undefined && high !== undefined && v >= low && v <= high;
      });
    } else if ((m = rest.match(/^([#\w]+)\s*(=|<>|<=|>=|<|>)\s*(:\w+)/))) {
      const [attr, op, operand] = [name(m[1] as string), m[2] as string, value(m[3] as string)];
      clauses.push((item) => {
        const v = scalar(item[attr]);
        if (v === undefined || operand === undefined || typeof v !== typeof operand) return false;
        return op === '='
          ? v === operand
          : op === '<>'
            ? v !== operand
            : op === '<'
              ? v < operand
              : op === '<='
                ? v <= operand
                : op === '>'
                  ? v > operand
                  : v >= operand;
      });
    } else {
      throw new Error(`stub table: unsupported expression at '${rest}' in '${expression}'`);
    }
    rest = rest.slice(m[0].length).trim();
    if (rest.length > 0) {
      const and = rest.match(/^AND\s+/i);
      if (!and) throw new Error(`stub table: expected AND at '${rest}' in '${expression}'`);
      rest = rest.slice(and[0].length);
    }
  }
  return (item) => clauses.every((c) => c(item));
}

/** What an index copies from the item, as DynamoDB projects it (the table's keys always). */
function projector(indexName: string | undefined): (item: Item) => Item {
  const index = TABLE.globalIndexes.find((g) => g.name === indexName);
  if (!index || index.projection.type === 'ALL') return (item) => item;
  const kept = new Set<string>([
    TABLE.partitionKey,
    TABLE.sortKey,
    index.partitionKey,
    index.sortKey,
    ...index.projection.attributes,
  ]);
  return (item) => Object.fromEntries(Object.entries(item).filter(([k]) => kept.has(k)));
}

export class StubTable {
  private readonly byKey = new Map<string, Item>();

  constructor(readonly items: readonly Item[]) {
    for (const item of items) {
      const key = keyOf(item, TABLE.partitionKey, TABLE.sortKey);
      if (key) this.byKey.set(key, item);
    }
  }

  private get(key: Item | undefined): Item | undefined {
    return key ? this.byKey.get(keyOf(key, TABLE.partitionKey, TABLE.sortKey) ?? '') : undefined;
  }

  /** The answer to one DynamoDB operation, as its JSON body. */
  answer(operation: string, input: Json): Json {
    switch (operation) {
      case 'GetItem':
        return this.getItem(input);
      case 'BatchGetItem':
        return this.batchGetItem(input);
      case 'TransactGetItems':
        return this.transactGetItems(input);
      case 'Query':
      case 'Scan':
        return this.query(operation, input);
      case 'UpdateItem':
      case 'DeleteItem':
        return this.droppedUpdate(input);
      case 'PutItem':
      case 'TransactWriteItems':
        return {};
      case 'BatchWriteItem':
        return { UnprocessedItems: {} };
      default:
        throw new Error(`stub table: ${operation} is not answered`);
    }
  }

  private getItem(input: Json): Json {
    const item = this.get(input.Key as Item);
    return item ? { Item: item } : {};
  }

  private batchGetItem(input: Json): Json {
    const requests = (input.RequestItems ?? {}) as Record<string, { Keys?: Item[] }>;
    const responses = Object.fromEntries(
      Object.entries(requests).map(([table, r]) => [
        table,
        (r.Keys ?? []).map((k) => this.get(k)).filter((i): i is Item => i !== undefined),
      ]),
    );
    return { Responses: responses, UnprocessedKeys: {} };
  }

  private transactGetItems(input: Json): Json {
    const gets = (input.TransactItems ?? []) as { Get?: { Key?: Item } }[];
    return { Responses: gets.map((g) => ({ ...(this.get(g.Get?.Key) ? { Item: this.get(g.Get?.Key) } : {}) })) };
  }

  /** An UpdateItem or DeleteItem: dropped, while a caller that asks for the item gets it as it is in the copy. */
  private droppedUpdate(input: Json): Json {
    const wanted = input.ReturnValues === 'ALL_NEW' || input.ReturnValues === 'ALL_OLD';
    const item = wanted ? this.get(input.Key as Item) : undefined;
    return item ? { Attributes: item } : {};
  }

  private query(operation: string, input: Json): Json {
    const names = input.ExpressionAttributeNames as Record<string, string> | undefined;
    const values = input.ExpressionAttributeValues as Item | undefined;
    const indexName = input.IndexName as string | undefined;
    const index = TABLE.globalIndexes.find((g) => g.name === indexName);
    const sortKey = index?.sortKey ?? TABLE.sortKey;
    const partitionKey = index?.partitionKey ?? TABLE.partitionKey;
    const matches =
      operation === 'Query' ? parseConditions(String(input.KeyConditionExpression), names, values) : () => true;
    const filter = input.FilterExpression ? parseConditions(String(input.FilterExpression), names, values) : () => true;
    // An index holds only the items that carry its keys (sparse).
    const candidates = this.items.filter(
      (i) => i[partitionKey]?.S !== undefined && i[sortKey]?.S !== undefined && matches(i),
    );
    candidates.sort(
      (a, b) =>
        String(scalar(a[sortKey])).localeCompare(String(scalar(b[sortKey]))) ||
        String(scalar(a[TABLE.sortKey])).localeCompare(String(scalar(b[TABLE.sortKey]))),
    );
    if (input.ScanIndexForward === false) candidates.reverse();
    const start = input.ExclusiveStartKey as Item | undefined;
    let from = 0;
    if (start) {
      const at = candidates.findIndex(
        (i) => keyOf(i, TABLE.partitionKey, TABLE.sortKey) === keyOf(start, TABLE.partitionKey, TABLE.sortKey),
      );
      from = at + 1;
    }
    const limit = typeof input.Limit === 'number' ? input.Limit : Infinity;
    // DynamoDB applies Limit to the items it reads, before the filter.
    const evaluated = candidates.slice(from, from + limit);
    const project = projector(indexName);
    const items = evaluated.filter(filter).map(project);
    const last = evaluated[evaluated.length - 1];
    const more = from + evaluated.length < candidates.length && last !== undefined;
    const lastKey = more
      ? Object.fromEntries(
          [TABLE.partitionKey, TABLE.sortKey, ...(index ? [index.partitionKey, index.sortKey] : [])].map((k) => [
            k,
            last[k] as AttributeValue,
          ]),
        )
      : undefined;
    return {
      Items: items,
      Count: items.length,
      ScannedCount: evaluated.length,
      ...(lastKey ? { LastEvaluatedKey: lastKey } : {}),
    };
  }
}
