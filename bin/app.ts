/** CDK app: `npx cdk synth` / `npx cdk deploy`. See docs/deploy.md. */
import { App } from 'aws-cdk-lib';
import { applyNagPacks } from '../lib/nag';
import { ShopCallsStack } from '../lib/stack';

const app = new App();
new ShopCallsStack(app, app.node.tryGetContext('stackName') ?? 'ShopCallsApi', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
// After the stack, so every construct is in place when the checks run at synth.
applyNagPacks(app);
