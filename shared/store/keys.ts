/**
 * The single table's partitions, prefixes and index partitions; the item key builders are in
 * ./item-keys.ts. docs/data-model.md describes the layout.
 *
 * Everything a shop owns lives in its partition `SHOP#<shopId>`, so an id from another
 * shop can never be read: the lookup simply finds nothing.
 */
export const shopPk = (shopId: string): string => `SHOP#${shopId}`;

/**
 * GSI1 partitions that are lists: a query names its partition with these, never by
 * building an item's entry with an empty id. The item entries below use the same builders.
 */
export const gsi1Partition = {
  apiKeyById: (keyId: string): string => `APIKEY#${keyId}`,
  /** A shop's jobs of one status. */
  jobsByStatus: (shopId: string, status: string): string => `${shopPk(shopId)}#JOBS#${status}`,
  /** A shop's events of one type. */
  eventsByType: (shopId: string, type: string): string => `${shopPk(shopId)}#EVENTS#${type}`,
  /** An endpoint's open (pending or retrying) deliveries. */
  openDeliveries: (shopId: string, endpointId: string): string => `${shopPk(shopId)}#WE#${endpointId}#OPEN`,
  /** Every shop's recoveries still running, by when the sweeper wakes each: few at a time, so one partition. */
  runningRecoveries: (): string => 'RECOVERY#RUNNING',
} as const;

/** Rate-limit buckets; the only items the authorizer may write (an IAM condition on this prefix). */
export const RATE_PK_PREFIX = 'RATE#';

/** Partitions of the due index: enough that no single key takes every open delivery's writes. */
export const DUE_BUCKETS = 8;
export const dueBucketPk = (bucket: number): string => `DUE#${bucket}`;
export function dueBucket(deliveryId: string): number {
  let sum = 0;
  for (let i = 0; i < deliveryId.length; i++) sum = (sum * 31 + deliveryId.charCodeAt(i)) >>> 0;
  return sum % DUE_BUCKETS;
}

/**
 * An endpoint's state item sits right after its configuration (`WE#<id>#STATE` after `WE#<id>`),
 * so one Query of the `WE#` prefix reads a shop's endpoints whole (the fan-out's one read).
 */
export const STATE_SUFFIX = '#STATE';
export const isEndpointStateKey = (sk: string): boolean => sk.endsWith(STATE_SUFFIX);

/** sk prefixes used with begins_with to list one item type inside a shop partition. */
export const skPrefix = {
  call: 'CALL#',
  job: 'JOB#',
  webhookEndpoint: 'WE#',
  event: 'EVT#',
  /** The shop's event feed, in feed order; `FEEDHEAD` sorts after every entry. */
  feed: 'FEED#',
  /** An endpoint's delivery rows. */
  endpointDeliveries: (endpointId: string) => `WD#${endpointId}#`,
  /** An event's current-delivery markers. */
  eventMarkers: (eventId: string) => `DLV#${eventId}#`,
  deletedEndpoint: 'WEGONE#',
  endpointStats: (endpointId: string) => `WESTAT#${endpointId}#`,
  portalSession: 'PS#',
} as const;
