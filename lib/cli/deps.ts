import { join } from 'node:path';
import { configFromEnv } from '../../shared/config';
import { apiDeps, type ApiDeps } from '../../shared/wiring/api';

/**
 * The table the operator tools (`npm run cli`, `npm run listen`) talk to: by default the one
 * `npm start` serves, with its key file. Against a local DynamoDB, http:// and loopback
 * webhook targets are allowed as `npm start` allows them.
 */
export function operatorDeps(env: NodeJS.ProcessEnv = process.env): ApiDeps {
  const local = { DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', TABLE_NAME: 'shop-calls', AWS_REGION: 'us-east-1', SECRETS_KEY_FILE: join('.local', 'secrets.key') };
  const merged = { ...local, ...env };
  const isLocal = Boolean(merged.DYNAMODB_ENDPOINT);
  return apiDeps(configFromEnv({ ...(isLocal ? { WEBHOOK_ALLOW_INSECURE_LOCAL: 'true' } : {}), ...merged }));
}
