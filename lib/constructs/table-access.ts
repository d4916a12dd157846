/**
 * Which DynamoDB actions each function may make: the stores behind each wiring part
 * (shared/wiring/{api,pipeline}.ts), and the actions each store's requests need in IAM. A
 * function is declared by the parts its handler passes to `lambdaDeps(...)`;
 * test/cdk/table-access.test.ts checks the declarations against the handlers and the stores,
 * so a handler or store that starts a new kind of request fails there before it fails in AWS.
 * Scan is nowhere: only the operator CLI scans (shared/store/operator-scan.ts).
 */
export type TableAction =
  | 'GetItem'
  | 'Query'
  | 'BatchGetItem'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'BatchWriteItem'
  | 'ConditionCheckItem';

/** Reads: all a GET route may make, whatever its stores can do. */
export const READ_ACTIONS: readonly TableAction[] = ['GetItem', 'Query', 'BatchGetItem'];

/**
 * Per store file (shared/store/<name>.ts, or shared/delivery/dynamo/<name>.ts for the delivery
 * engine's): the requests it sends, as IAM names them. A
 * TransactWriteItems needs the action of each of its items (Put, Update, Delete); the
 * `uses` stores are built or called inside it.
 */
export const STORE_ACTIONS: Record<string, { actions: TableAction[]; uses?: string[] }> = {
  'api-keys': { actions: ['GetItem', 'PutItem', 'Query', 'UpdateItem'] },
  'attempt-deliveries': {
    actions: ['BatchGetItem', 'GetItem', 'Query', 'UpdateItem'],
    uses: ['endpoint-stats', 'resource-order'],
  },
  'attempt-ledger': { actions: ['UpdateItem'], uses: ['endpoint-gate', 'endpoint-stats'] },
  calls: { actions: ['GetItem', 'PutItem', 'Query', 'UpdateItem'] },
  'current-deliveries': { actions: ['PutItem', 'UpdateItem'], uses: ['event-deliveries'] },
  deliveries: { actions: ['Query'], uses: ['endpoint-deliveries', 'event-deliveries', 'fanout-deliveries'] },
  'fanout-deliveries': {
    actions: ['BatchGetItem', 'BatchWriteItem', 'PutItem', 'Query'],
    uses: ['attempt-deliveries'],
  },
  'due-index': { actions: ['BatchGetItem', 'Query', 'UpdateItem'] },
  'endpoint-gate': {
    actions: ['GetItem', 'PutItem', 'UpdateItem'],
    uses: ['endpoint-stats', 'endpoint-state'],
  },
  'endpoint-deliveries': { actions: ['Query'] },
  'endpoint-state': { actions: ['BatchGetItem'] },
  'endpoint-stats': { actions: ['GetItem', 'Query', 'UpdateItem'] },
  'event-deliveries': { actions: ['BatchGetItem', 'Query'] },
  events: { actions: ['GetItem', 'PutItem', 'Query', 'UpdateItem'] },
  'event-feed': { actions: ['BatchGetItem', 'PutItem', 'Query'] },
  idempotency: { actions: ['DeleteItem', 'GetItem', 'PutItem', 'UpdateItem'] },
  jobs: { actions: ['GetItem', 'PutItem', 'Query'] },
  'portal-sessions': { actions: ['DeleteItem', 'GetItem', 'PutItem', 'Query', 'UpdateItem'] },
  'rate-limits': { actions: ['UpdateItem'] },
  'resource-order': { actions: ['GetItem', 'UpdateItem'] },
  recoveries: { actions: ['GetItem', 'PutItem', 'Query', 'UpdateItem'] },
  shops: { actions: ['GetItem', 'PutItem', 'UpdateItem'] },
  'webhook-endpoints': {
    actions: ['DeleteItem', 'GetItem', 'PutItem', 'Query', 'UpdateItem'],
    uses: ['endpoint-gate', 'endpoint-state'],
  },
};

/** The stores each wiring part builds (none: it touches no table). */
export const PART_STORES: Record<string, string[]> = {
  apiKeyDeps: ['api-keys'],
  rateLimitDeps: ['rate-limits'],
  portalSessionDeps: ['portal-sessions'],
  shopDeps: ['shops'],
  callDeps: ['calls', 'shops'],
  jobDeps: ['jobs'],
  endpointDeps: ['webhook-endpoints'],
  urlGuardDeps: [],
  eventWriterDeps: ['events'],
  eventFeedDeps: ['event-feed'],
  eventPageDeps: ['events', 'event-deliveries'],
  eventLogDeps: ['events', 'deliveries', 'current-deliveries', 'webhook-endpoints'],
  endpointLifecycleDeps: [
    'webhook-endpoints',
    'deliveries',
    'current-deliveries',
    'recoveries',
    'events',
    'endpoint-stats',
  ],
  endpointPageDeps: ['endpoint-state', 'endpoint-deliveries'],
  recoveryDeps: ['endpoint-state', 'current-deliveries', 'recoveries', 'events'],
  cipherDeps: [],
  idempotencyDeps: ['idempotency'],
  cursorDeps: [],
  fanoutDeps: [
    'webhook-endpoints',
    'fanout-deliveries',
    'events',
    'current-deliveries',
    'recoveries',
    'resource-order',
    'event-feed',
  ],
  notifyDeps: ['events', 'shops', 'webhook-endpoints'],
  deliverDeps: ['attempt-deliveries', 'endpoint-gate', 'attempt-ledger', 'resource-order'],
  sweepDeps: ['due-index', 'recoveries', 'endpoint-state', 'resource-order'],
  ingestDeadLetterDeps: [],
};

function storeActions(store: string, seen = new Set<string>()): TableAction[] {
  const entry = STORE_ACTIONS[store];
  if (!entry) throw new Error(`no table actions declared for store ${store} (lib/constructs/table-access.ts)`);
  if (seen.has(store)) return [];
  seen.add(store);
  return [...entry.actions, ...(entry.uses ?? []).flatMap((s) => storeActions(s, seen))];
}

/** The actions of a function wired from `parts`; `readOnly` keeps the reads only (GET routes). */
export function tableActions(parts: readonly string[], readOnly: boolean): TableAction[] {
  const all = parts.flatMap((part) => {
    const stores = PART_STORES[part];
    if (!stores) throw new Error(`no stores declared for wiring part ${part} (lib/constructs/table-access.ts)`);
    return stores.flatMap((s) => storeActions(s));
  });
  return [...new Set(all)].filter((a) => !readOnly || READ_ACTIONS.includes(a)).sort();
}
