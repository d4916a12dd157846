import * as siftModule from 'sift';
import { logger } from '../logger';
import type { EventFilter } from './event-filter-schema';
import type { EventRecord } from './events';

/**
 * The operators the matcher knows: exactly those validation allows (./event-filter-schema.ts).
 * sift's default tester also has `$where`, which compiles a string with `new Function`;
 * this one is built without it, so a filter that slipped past validation (an item written
 * by hand, an older rule) fails to compile instead of running anything.
 */
// sift ships CommonJS for Node, whose names Node's ES module loader cannot see (tsx, the local
// stack: there all of it is the default export), and an ES module that esbuild and jest use.
const sift: typeof siftModule =
  'createQueryTester' in siftModule ? siftModule : (siftModule as unknown as { default: typeof siftModule }).default;
const { $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $exists, $not, $and, $or, $nor } = sift;
const OPERATIONS = { $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $exists, $not, $and, $or, $nor };

type Tester = (envelope: { type: string; data: unknown }) => boolean;

// The records of one stream batch share their endpoint objects (listed once per shop), so a
// filter is compiled once per batch, not once per event; the cache goes with the records.
const compiled = new WeakMap<EventFilter, Tester>();

function testerOf(filter: EventFilter): Tester {
  let tester = compiled.get(filter);
  if (!tester) {
    tester = sift.createQueryTester<{ type: string; data: unknown }, unknown>(filter, { operations: OPERATIONS });
    compiled.set(filter, tester);
  }
  return tester;
}

/**
 * Whether the event matches the endpoint's filter, on its envelope `{ type, data }` only
 * (ids, timestamps and the shop are not part of it). No filter matches everything. A
 * filter that cannot be evaluated matches nothing: an event is better not sent than sent
 * to an endpoint that asked not to get it, and a fan-out that threw would retry forever.
 */
export function matchesFilter(
  filter: EventFilter | null | undefined,
  event: Pick<EventRecord, 'type' | 'data' | 'shop_id'>,
): boolean {
  if (!filter) return true;
  try {
    return testerOf(filter)({ type: event.type, data: event.data });
  } catch (err) {
    logger.error('Webhook endpoint filter could not be evaluated; the event is not sent to it', {
      shop_id: event.shop_id,
      error: err as Error,
    });
    return false;
  }
}
