/**
 * Key builders of the single table: the only place that knows how items are addressed.
 * Adapters and tests use these; docs/data-model.md describes the same layout.
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
  /** The shop's event feed, in feed order. */
  feed: 'FEED#',
  /** The hour marks of the shop's event feed, in time order. */
  feedHour: 'FEEDHOUR#',
  /** An endpoint's delivery rows. */
  endpointDeliveries: (endpointId: string) => `WD#${endpointId}#`,
  /** An event's current-delivery markers. */
  eventMarkers: (eventId: string) => `DLV#${eventId}#`,
  deletedEndpoint: 'WEGONE#',
  endpointStats: (endpointId: string) => `WESTAT#${endpointId}#`,
  portalSession: 'PS#',
} as const;

/** Every item's key (and its index entries), by item type. */
export const keys = {
  shop: (shopId: string) => ({ pk: shopPk(shopId), sk: 'PROFILE' }),

  /** API keys are addressed by the SHA-256 of the clear key; the clear key is never stored. */
  apiKey: (keyHash: string) => ({ pk: `APIKEY#${keyHash}`, sk: 'APIKEY' }),

  /** GSI1 entry to find a key by its public id (revocation). */
  apiKeyById: (keyId: string) => ({ gsi1pk: gsi1Partition.apiKeyById(keyId), gsi1sk: 'APIKEY' }),

  /** A portal session, addressed like a key by the SHA-256 of its token: what the authorizer reads. */
  portalSession: (tokenHash: string) => ({ pk: `PORTALSESSION#${tokenHash}`, sk: 'PORTALSESSION' }),

  /**
   * The same session in its shop's partition, by id: what DELETE finds (and removes), so another
   * shop's id is never found.
   */
  portalSessionById: (shopId: string, sessionId: string) => ({
    pk: shopPk(shopId),
    sk: `${skPrefix.portalSession}${sessionId}`,
  }),

  call: (shopId: string, callId: string) => ({ pk: shopPk(shopId), sk: `CALL#${callId}` }),

  /** Marks a voice-platform call id as recorded, so a retried ingest writes nothing twice. */
  callExternal: (shopId: string, externalId: string) => ({
    pk: shopPk(shopId),
    sk: `CALLEXT#${externalId}`,
  }),

  transcript: (shopId: string, callId: string) => ({ pk: shopPk(shopId), sk: `TRANSCRIPT#${callId}` }),

  summary: (shopId: string, callId: string) => ({ pk: shopPk(shopId), sk: `SUMMARY#${callId}` }),

  job: (shopId: string, jobId: string) => ({ pk: shopPk(shopId), sk: `JOB#${jobId}` }),

  /** GSI1 entry listing a shop's jobs of one status, newest first. */
  jobByStatus: (shopId: string, status: string, jobId: string) => ({
    gsi1pk: gsi1Partition.jobsByStatus(shopId, status),
    gsi1sk: jobId,
  }),

  webhookEndpoint: (shopId: string, endpointId: string) => ({ pk: shopPk(shopId), sk: `WE#${endpointId}` }),

  /**
   * The endpoint's hot state (leases, health, rate window, current stats): apart from its
   * configuration, right after it (`WE#<id>#STATE`), so one Query of `WE#` reads both.
   */
  endpointState: (shopId: string, endpointId: string) => ({
    pk: shopPk(shopId),
    sk: `${skPrefix.webhookEndpoint}${endpointId}${STATE_SUFFIX}`,
  }),

  event: (shopId: string, eventId: string) => ({ pk: shopPk(shopId), sk: `EVT#${eventId}` }),

  /**
   * A raise of an endpoint's rate limit, for the fan-out to wake what waits for the old one
   * (../delivery/rate-raise.ts).
   */
  rateRaise: (shopId: string, endpointId: string, at: string) => ({
    pk: shopPk(shopId),
    sk: `RATERAISE#${endpointId}#${at}`,
  }),

  /** An entry of the shop's event feed at its place `seq`, written with a fixed width so keys sort by it. */
  feedEntry: (shopId: string, seq: number) => ({
    pk: shopPk(shopId),
    sk: `${skPrefix.feed}${String(seq).padStart(16, '0')}`,
  }),

  /** Where an hour (`2026-11-29T08`) of the shop's event feed starts at the latest: every entry before is earlier. */
  feedHour: (shopId: string, hour: string) => ({ pk: shopPk(shopId), sk: `${skPrefix.feedHour}${hour}` }),

  /** GSI1 entry listing a shop's events of one type, newest first. */
  eventByType: (shopId: string, type: string, eventId: string) => ({
    gsi1pk: gsi1Partition.eventsByType(shopId, type),
    gsi1sk: eventId,
  }),

  /**
   * A delivery row sits under its endpoint, so the endpoint's list of deliveries is a Query of
   * the table (ids are time-ordered: newest first is descending). Found by event through the
   * fan-out's derived id and the markers below (shared/delivery/dynamo/event-deliveries.ts).
   */
  delivery: (shopId: string, endpointId: string, deliveryId: string) => ({
    pk: shopPk(shopId),
    sk: `${skPrefix.endpointDeliveries(endpointId)}${deliveryId}`,
  }),

  /**
   * Which delivery of the event to the endpoint a redeliver or recover made current, and every
   * delivery they made for the pair; the event's markers share a prefix, so one Query lists them.
   */
  currentDelivery: (shopId: string, eventId: string, endpointId: string) => ({
    pk: shopPk(shopId),
    sk: `${skPrefix.eventMarkers(eventId)}${endpointId}`,
  }),

  /** Left by a deleted endpoint while its deliveries are kept, so its event's lists still find them. */
  deletedEndpoint: (shopId: string, endpointId: string) => ({
    pk: shopPk(shopId),
    sk: `${skPrefix.deletedEndpoint}${endpointId}`,
  }),

  /** GSI1 entry of a delivery while it is pending or retrying: what to cancel when its endpoint is disabled. */
  openDeliveryByEndpoint: (shopId: string, endpointId: string, deliveryId: string) => ({
    gsi1pk: gsi1Partition.openDeliveries(shopId, endpointId),
    gsi1sk: deliveryId,
  }),

  /**
   * The open deliveries of one resource to an ordered endpoint, in the order of their events
   * (shared/delivery/resource-order.ts).
   */
  orderChain: (shopId: string, endpointId: string, orderKey: string) => ({
    pk: shopPk(shopId),
    sk: `ORD#${endpointId}#${orderKey}`,
  }),

  /** A recovery of an endpoint's missed events (shared/delivery/recovery-job.ts). */
  recovery: (shopId: string, recoveryId: string) => ({ pk: shopPk(shopId), sk: `RCV#${recoveryId}` }),

  /** GSI1 entry of a recovery while it runs, sorted by when the sweeper must wake it if no page was written by then. */
  runningRecovery: (recoveryId: string, sweepAt: string) => ({
    gsi1pk: gsi1Partition.runningRecoveries(),
    gsi1sk: `${sweepAt}#${recoveryId}`,
  }),

  /** An endpoint's attempt counters over one stats bucket (see shared/delivery/endpoint-stats.ts). */
  endpointStats: (shopId: string, endpointId: string, bucketStart: string) => ({
    pk: shopPk(shopId),
    sk: `${skPrefix.endpointStats(endpointId)}${bucketStart}`,
  }),

  /**
   * GSI2 entry of a delivery while it is pending or retrying: the due index the sweeper
   * reads, one of `DUE_BUCKETS` partitions (by delivery id), sorted by sweep time.
   */
  dueDelivery: (deliveryId: string, sweepAt: string) => ({
    gsi2pk: dueBucketPk(dueBucket(deliveryId)),
    gsi2sk: `${sweepAt}#${deliveryId}`,
  }),

  /** A rate-limit bucket (an API key's, a source address's): one number, see ../domain/rate-limits.ts. */
  rateBucket: (bucket: string) => ({ pk: `${RATE_PK_PREFIX}${bucket}`, sk: 'RATE' }),

  /** Idempotency records (Powertools idempotency's layout); `recordKey` is `IDEMPOTENCY#<hash>` (./idempotency.ts). */
  idempotency: (recordKey: string) => ({ pk: recordKey, sk: 'IDEMPOTENCY' }),
} as const;
