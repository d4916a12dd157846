/**
 * Stands in for `@aws-sdk/credential-provider-node` in the Lambda bundles only (an esbuild
 * alias in lib/constructs/function.ts): the SDK's own environment provider, which the
 * default chain tries first. Lambda always hands a function its role's credentials in
 * environment variables (and refreshes them by starting new environments), so in Lambda
 * the chain never goes past this link; the other links (SSO, STS web identity, INI files,
 * IMDS, ECS) and the nested STS and SSO clients they pull in are 90 KB of every bundle,
 * which every cold start would read and parse for links no invocation reaches.
 * Local runs, the CLI and tests keep the full default chain.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';

export const defaultProvider: typeof fromEnv = (init) => fromEnv(init);
