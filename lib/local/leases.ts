import type { Dynamo } from '../../shared/store/client';
import { STATE_ENTITY } from '../../shared/delivery/dynamo/endpoint-state';

/**
 * At a start of the local stack, the requests of its last run are over whatever they
 * were: it was stopped or killed. Their leases on endpoints would otherwise hold slots
 * (and keep the sweeper off their deliveries) until they expire, up to the delivery
 * timeout plus 5 s, unscaled. They are on the endpoints' state items. Local only: in AWS
 * consumers come and go while others run.
 */
export async function breakLeasesOfLastRun(db: Dynamo): Promise<number> {
  let broken = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.doc.scan({
      TableName: db.tableName,
      FilterExpression: 'entity = :endpoint',
      ExpressionAttributeValues: { ':endpoint': STATE_ENTITY },
      ExclusiveStartKey: start,
    });
    for (const item of page.Items ?? []) {
      // And what its batches' runs carried (`c_…`, shared/delivery/circuit.ts), which would send
      // those deliveries' messages back to the queue until then.
      const carried = Object.keys(item).filter((name) => name.startsWith('c_'));
      if (Object.keys((item.leases as Record<string, unknown> | undefined) ?? {}).length === 0 && carried.length === 0)
        continue;
      const names = Object.fromEntries(carried.map((name, i) => [`#c${i}`, name]));
      await db.doc.update({
        TableName: db.tableName,
        Key: { pk: item.pk, sk: item.sk },
        UpdateExpression:
          `SET leases = :empty, lease_version = lease_version + ` +
          `:one${carried.length ? ` REMOVE ${Object.keys(names).join(', ')}` : ''}`,
        ConditionExpression: 'attribute_exists(pk)',
        ...(carried.length ? { ExpressionAttributeNames: names } : {}),
        ExpressionAttributeValues: { ':empty': {}, ':one': 1 },
      });
      broken++;
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return broken;
}
