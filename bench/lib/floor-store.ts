import type { Dynamo } from '../../shared/store/client';
import { DynamoDeliveryStore } from '../../shared/delivery/dynamo/deliveries';

/**
 * The deliveries store as the floors use it: recording an attempt is the row's conditional
 * update, one request, and nothing else. The endpoint's stats counter "is not part of any
 * delivery" (shared/delivery/dynamo/endpoint-stats.ts) and a consumer may add it once per batch, so
 * the floors leave it out. If the store stops keeping it in `stats`, this does nothing and
 * the throughput floor's printed table requests per delivery show it.
 */
export function rowOnlyStore(db: Dynamo): DynamoDeliveryStore {
  const store = new DynamoDeliveryStore(db);
  (store as unknown as { stats: { addQuietly(): Promise<void> } }).stats = { addQuietly: async () => undefined };
  return store;
}
