import type { EventLogDeps } from './domain/event-log';
import type { RedeliverDeps } from './domain/deliveries';
import { runtimeDeps } from './runtime';
import { DynamoDeliveryStore } from './store/deliveries';
import { DynamoEventStore } from './store/events';
import { timeScale } from './webhooks/config';

let cached: { db: object; deps: EventLogDeps & RedeliverDeps } | undefined;

/** The event log's stores: table only (the API never talks to the queue). */
export function pipelineReadDeps(): EventLogDeps & RedeliverDeps {
  const base = runtimeDeps();
  if (cached?.db !== base.db) {
    cached = {
      db: base.db,
      deps: { events: new DynamoEventStore(base.db), deliveries: new DynamoDeliveryStore(base.db), endpoints: base.endpoints, timeScale: timeScale(), now: base.now },
    };
  }
  return cached.deps;
}
