import { App, type AppProps } from 'aws-cdk-lib';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** cdk.json's context: the feature flags the CDK CLI hands the app at every synth and deploy. */
const CDK_JSON_CONTEXT = (
  JSON.parse(readFileSync(join(__dirname, '..', '..', 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }
).context;

/**
 * An App as the CDK CLI makes it, so the templates under test are the ones that deploy, with
 * `context` (the deploy settings) on top. Nothing is bundled: `Template.fromStack` would
 * otherwise build every function.
 */
export function cdkApp(context: Record<string, unknown> = {}, props: Omit<AppProps, 'context'> = {}): App {
  return new App({ ...props, context: { ...CDK_JSON_CONTEXT, 'aws:cdk:bundling-stacks': [], ...context } });
}

/**
 * The same App for a test that reads a template. CloudFormation's own checks at synth, which a
 * deploy runs, change nothing in it: the tests that synthesize (cdk-nag, the settings, cfn-lint)
 * keep them, with cdkApp.
 */
export const templateApp = (context: Record<string, unknown> = {}): App =>
  cdkApp(context, { builtinCloudFormationValidation: false });
