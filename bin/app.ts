/** CDK app: `npx cdk synth` / `npx cdk deploy`. See docs/deploy.md. */
import { App } from 'aws-cdk-lib';
import { ShopCallsStack } from '../lib/stack';

const app = new App();
new ShopCallsStack(app, app.node.tryGetContext('stackName') ?? 'ShopCallsApi', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
