/**
 * Stands in for `@aws-sdk/credential-provider-node` in the Lambda bundles only (an esbuild
 * alias in lib/constructs/function.ts): the SDK's own environment provider, which the
 * default chain tries first. Lambda always hands a function its role's credentials in
 * environment variables (and refreshes them by starting new environments), so in Lambda
 * the chain never goes past this link; the other links (SSO, STS web identity, INI files,
 * IMDS, ECS) and the nested STS and SSO clients they pull in would be code no Lambda runs,
 * in every bundle and its cold start (`npm run bundle:report` weighs the bundles).
 * Local runs, the CLI and tests keep the full default chain.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';

export const defaultProvider: typeof fromEnv = (init) => fromEnv(init);
