import type { Sender } from './sender';
import type { Admission, EndpointHealth } from './circuit';
import type { GuardResult } from './url-guard';
import type {
  AttemptRecord,
  DeliveryMessage,
  DeliveryQueue,
  DeliveryRecord,
  DeliveryStore,
  DeliveryRef,
} from './records';
import type { DeliveryStatus } from './status';
import type { EventRecord } from '../domain/events';
import type { SecretCipher } from '../domain/secrets';
import type { EndpointRecord, QueuedDeliveries } from '../domain/webhook-endpoints';
import type { OrderStore } from './resource-order';

/**
 * The ports of the delivery consumer and the sweeper; their adapters are in ./dynamo and ./aws
 * (locally, lib/local/adapters.ts).
 */

export interface AttemptUpdate {
  status: DeliveryStatus;
  attempts: number;
  last_attempt_at: string;
  next_attempt_at: string | null;
  sweep_at: string | null;
  last_response_status: number | null;
  last_error: string | null;
  entry: AttemptRecord;
}

/** What a batch of messages reads: rows, events and endpoints, each null when gone. */
export interface AttemptInputs {
  delivery(m: DeliveryMessage): DeliveryRecord | null;
  event(m: DeliveryMessage): EventRecord | null;
  endpoint(m: DeliveryMessage): EndpointRecord | null;
}

export interface AttemptDeliveryStore extends Omit<DeliveryStore, 'createMissing' | 'unsent'>, QueuedDeliveries {
  /** Every row, event and endpoint the messages name, in one round trip (strongly consistent). */
  readForAttempts(messages: DeliveryMessage[]): Promise<AttemptInputs>;
  /** Records attempt N only if the row still says N-1 attempts and is open; false when another worker did. */
  recordAttempt(delivery: DeliveryRecord, update: AttemptUpdate): Promise<boolean>;
  /** False when the delivery had ended meanwhile (it keeps its outcome). */
  cancel(delivery: DeliveryRef): Promise<boolean>;
  /** Every pending or retrying delivery of the endpoint. */
  listOpenForEndpoint(shopId: string, endpointId: string): Promise<DeliveryRecord[]>;
  /**
   * Up to `limit` open deliveries of the endpoint already due at `now`, oldest first, as messages
   * (read from an index: may lag a write).
   * Never an ordered one not yet attempted: it is due from its row's creation, before its chain has said it may go.
   */
  listDueForEndpoint(shopId: string, endpointId: string, now: Date, limit: number): Promise<DeliveryMessage[]>;
}

/** What an attempt's end writes on its endpoint besides dropping the lease. */
export interface ReleaseChange {
  succeeded: boolean;
  /** A failure the receiver caused: counted atomically (concurrent attempts each add theirs). */
  counted: boolean;
  /** The failure opened (or, after a probe, reopened) the circuit: write its probe time. */
  opens: boolean;
  /** The endpoint's health after the attempt (written whole on success). */
  health: EndpointHealth;
  /** New `failing_since` (a time at the first failure, null on success), or undefined to leave it. */
  failingSince?: string | null;
}

/** What a release did: the circuit as it was before, and whether it took the backlog mark. */
export interface Released {
  circuitBefore: EndpointHealth['circuit'] | null;
  /** A success found the endpoint marked as having deliveries waiting for a slot (and cleared the mark). */
  backlog: boolean;
}

/** A slot of an endpoint: the lease, stored under the id of the delivery it was admitted for. */
export interface RunSlot {
  key: string;
  token: string;
}

/** An attempt recorded on its row alone, in a run of successes: what it adds to the endpoint's stats. */
export interface RunAttempt {
  entry: AttemptRecord;
  status: DeliveryStatus;
}

/**
 * What a batch's runs of successes on one endpoint leave for the write that ends the last of
 * them: the stats of the attempts recorded on their rows alone, and the slots of the runs
 * that ended before it (kept until then, not released one write each).
 */
export interface Carried {
  attempts: RunAttempt[];
  slots: RunSlot[];
  /**
   * The deliveries the admission wrote as carried for the runs, until `carriedUntil`: the last run's write ends
   * that.
   */
  deliveries: string[];
  carriedUntil?: number;
}

/** A sent attempt's end: what its row records, and what its endpoint's lease and health become. */
export interface AttemptEnd {
  delivery: DeliveryRecord;
  update: AttemptUpdate;
  endpoint: EndpointRecord;
  /** The lease the attempt ran under. */
  token: string;
  /**
   * The delivery id that lease is stored under, when a run passed it on to this delivery without a
   * write (default: this delivery's).
   */
  leaseKey?: string;
  change: ReleaseChange;
  /** Written with this end: other runs' slots released, their attempts counted in the stats. */
  carried?: Carried;
}

export interface Finished {
  /**
   * False when the row had moved on: another worker recorded this attempt first, or the row was cancelled while
   * the attempt was under way (the attempt is then logged on it, uncounted).
   */
  recorded: boolean;
  released: Released;
}

export interface AttemptLedger {
  /**
   * Records the attempt (as `recordAttempt`, counted in the endpoint's stats) and ends its
   * lease (as `release`), with what other runs carried; the lease is ended even when the
   * record finds the attempt already recorded.
   */
  finish(end: AttemptEnd): Promise<Finished>;
  /**
   * Records a success of a run on its row alone (as `recordAttempt`, without the stats): the
   * slot stays held for the next delivery, and the stats ride on the run's last write.
   */
  recordInRun(delivery: DeliveryRecord, update: AttemptUpdate): Promise<boolean>;
  /** Releases what runs carried when no attempt's end could take it (the last run failed to write). */
  releaseCarried(endpoint: EndpointRecord, carried: Carried): Promise<void>;
}

export interface EndpointGateStore {
  get(shopId: string, id: string): Promise<EndpointRecord | null>;
  /**
   * Writes an admission (leases taken, expired ones dropped, circuit) only if nobody admitted since
   * this read; false on a lost race.
   */
  admit(endpoint: EndpointRecord, admission: Admission): Promise<boolean>;
  /** Drops the lease (if still ours) and writes the health; returns the circuit as it was before. */
  release(endpoint: EndpointRecord, deliveryId: string, token: string, change: ReleaseChange): Promise<Released>;
  /**
   * Marks that deliveries of the endpoint wait for a slot (on the queue): the next success pulls
   * due ones from the table.
   */
  markBacklog(endpoint: EndpointRecord, at: string): Promise<void>;
  /** Disables (if still enabled) and writes the event in one transaction; false if it was already disabled. */
  disable(
    endpoint: EndpointRecord,
    reason: 'failing' | 'gone',
    lastErrors: string[],
    event: EventRecord,
    at: string,
  ): Promise<boolean>;
}

export interface RetryScheduler {
  schedule(message: DeliveryMessage, at: Date): Promise<void>;
  /**
   * True when waking at this delay costs a schedule of its own (EventBridge Scheduler, past
   * the queue's 15-minute delay). While an endpoint's circuit is open such deliveries get
   * none: the sweeper wakes them, so a dead endpoint holds no schedules.
   */
  needsSchedule(delayMs: number): boolean;
}

export interface DeliverySettings {
  /** The receiver's time to answer (contract: 10 s). */
  timeoutMs: number;
  /** How soon a delivery over its endpoint's in-flight limit is tried again. */
  deferMs: number;
}

export interface AttemptDeps {
  deliveries: AttemptDeliveryStore;
  /** The chains of ordered endpoints: a delivery that ends releases the next of its resource. */
  order: OrderStore;
  endpoints: EndpointGateStore;
  ledger: AttemptLedger;
  queue: DeliveryQueue;
  scheduler: RetryScheduler;
  sender: Sender;
  cipher: SecretCipher;
  /** URL guard with DNS, refusing names that do not resolve. */
  checkTarget: (url: string) => Promise<GuardResult>;
  settings: DeliverySettings;
  /** TIME_SCALE (local stack only): multiplies every delivery clock. */
  timeScale: number;
  now: () => Date;
}
