import type { ApiKeyStore } from './domain/api-keys';
import type { CallStore } from './domain/calls';
import type { JobStore } from './domain/jobs';
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
  now: () => Date;
}

let cached: { key: string; deps: Deps } | undefined;

/** The adapters for the current environment (AWS, or DynamoDB Local when DYNAMODB_ENDPOINT is set). */
export function runtimeDeps(): Deps {
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
        now: () => new Date(),
      },
    };
  }
  return cached.deps;
}
