import type { ApiKeyStore } from './domain/api-keys';
import type { CallStore } from './domain/calls';
import type { JobStore } from './domain/jobs';
import type { SecretCipher } from './domain/secrets';
import type { EndpointStore, EventWriter } from './domain/webhook-endpoints';
import { DynamoEventStore } from './store/events';
import { DynamoEndpointStore } from './store/webhook-endpoints';
import { guardPolicyFromEnv, ROTATION_GRACE_MS, timeScale } from './webhooks/config';
import { checkUrl, type GuardPolicy, type GuardResult } from './webhooks/url-guard';
import type { ShopStore } from './domain/shop';
import { DynamoApiKeyStore } from './store/api-keys';
import { DynamoCallStore } from './store/calls';
import { DynamoJobStore } from './store/jobs';
import { dynamo, storeConfigFromEnv, type Dynamo } from './store/client';
import { DynamoShopStore } from './store/shops';

/** Everything a handler needs from the outside world; tests pass fakes instead. */
export interface Deps {
  db: Dynamo;
  shops: ShopStore;
  apiKeys: ApiKeyStore;
  calls: CallStore;
  jobs: JobStore;
  endpoints: EndpointStore;
  events: EventWriter;
  /** Only in `secretDeps()` (./runtime-secrets): the other functions bundle without KMS. */
  readonly cipher: SecretCipher;
  checkUrl: (url: string, policy: GuardPolicy) => Promise<GuardResult>;
  policy: GuardPolicy;
  rotationGraceMs: number;
  now: () => Date;
}

/** Everything but the secret cipher. */
export type TableDeps = Omit<Deps, 'cipher'>;

let cached: { key: string; deps: TableDeps } | undefined;

/** The adapters for the current environment (AWS, or DynamoDB Local when DYNAMODB_ENDPOINT is set). */
export function runtimeDeps(): TableDeps {
  const config = storeConfigFromEnv();
  const key = `${config.endpoint}|${config.tableName}|${config.region}`;
  if (cached?.key !== key) {
    const db = dynamo(config);
    cached = {
      key,
      deps: {
        db,
        shops: new DynamoShopStore(db),
        apiKeys: new DynamoApiKeyStore(db),
        calls: new DynamoCallStore(db),
        jobs: new DynamoJobStore(db),
        endpoints: new DynamoEndpointStore(db),
        events: new DynamoEventStore(db),
        checkUrl: (url, policy) => checkUrl(url, policy),
        policy: guardPolicyFromEnv(),
        rotationGraceMs: ROTATION_GRACE_MS * timeScale(),
        now: () => new Date(),
      },
    };
  }
  return cached.deps;
}
