/**
 * Stands in for `@aws-sdk/credential-provider-node` in the Lambda bundles only (an esbuild
 * alias in lib/constructs/function.ts). Lambda always hands a function its role's
 * credentials in environment variables, which is the first link of the SDK's default chain;
 * the other links (SSO, STS web identity, INI files, IMDS, ECS) and the nested STS and SSO
 * clients they pull in are 90 KB of every bundle that a function never runs.
 * Local runs and tests keep the full default chain.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';

export const defaultProvider: typeof fromEnv = (init) => fromEnv(init);
