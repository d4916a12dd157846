import { configFromEnv } from '../../shared/config';
import { apiDeps, type ApiDeps } from '../../shared/wiring/api';
import { findStack, localTableEnv } from '../local/stack-file';

/**
 * The table the operator tools (`npm run cli`, `npm run listen`) talk to: by default the one
 * `npm start` serves (where its stack file says), with its key file. Against a local DynamoDB,
 * http:// and loopback webhook targets are allowed as `npm start` allows them. A deployed
 * stack's target (lib/cli/target.ts) sets DYNAMODB_ENDPOINT to '' and wins over all of this.
 */
export function operatorDeps(env: NodeJS.ProcessEnv = process.env): ApiDeps {
  const local = env.DYNAMODB_ENDPOINT === '' ? {} : localTableEnv(env, findStack(env));
  const merged: NodeJS.ProcessEnv = { ...env, ...local };
  const isLocal = Boolean(merged.DYNAMODB_ENDPOINT);
  return apiDeps(configFromEnv({ ...(isLocal ? { WEBHOOK_ALLOW_INSECURE_LOCAL: 'true' } : {}), ...merged }));
}
