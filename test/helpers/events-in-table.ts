import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { EventRecord } from '../../shared/domain/events';
import type { Deps } from '../../shared/runtime';
import { eventFromItem } from '../../shared/store/events';
import { shopPk, skPrefix } from '../../shared/store/keys';

/** Every event item of a shop, read straight from the table (oldest first). */
export async function eventsOf(deps: Pick<Deps, 'db'>, shopId: string): Promise<EventRecord[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await deps.db.doc.send(
      new QueryCommand({
        TableName: deps.db.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': shopPk(shopId), ':p': skPrefix.event },
        ExclusiveStartKey: start,
        ConsistentRead: true,
      }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items.map(eventFromItem);
}
