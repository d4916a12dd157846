import { Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';

/**
 * cdk-nag's AwsSolutions and Serverless packs as CDK validation plugins: `cdk synth` and
 * `cdk deploy` fail on any finding not acknowledged (with its reason) on the construct it
 * names. bin/app.ts applies them; the template tests apply the same.
 */
export function applyNagPacks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
}
