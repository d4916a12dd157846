import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ShopCallsStack } from '../../lib/stack';

/**
 * Each function's environment as the cloud stack sets it (synthesized, not restated, so the
 * benchmark cannot drift from what deploys), with the deploy-time references filled in with
 * values of the right form that point at the loopback stub, and the variables Lambda itself
 * sets. Owner emails are configured (`-c senderEmail=…`), so Notify sends through SES.
 */
const ACCOUNT = '123456789012';
const REGION = 'us-east-1';

/** What a CloudFormation reference in a function's environment stands for, by variable. */
function resolved(name: string, stubUrl: string): string {
  const values: Record<string, string> = {
    TABLE_NAME: 'ShopCallsApi-DataTable',
    SECRETS_KMS_KEY_ID: `arn:aws:kms:${REGION}:${ACCOUNT}:key/6f1c2a4e-0d3b-4c5e-9a7f-1b2c3d4e5f60`,
    CURSOR_SECRET_ARN: `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:CursorKey-AbCdEf`,
    // In AWS the queue URL names the SQS endpoint; the SDK sends to the URL's host.
    QUEUE_URL: `${stubUrl}/${ACCOUNT}/ShopCallsApi-Deliveries`,
    NOTIFY_QUEUE_URL: `${stubUrl}/${ACCOUNT}/ShopCallsApi-OwnerEmails`,
    INGEST_DLQ_URL: `${stubUrl}/${ACCOUNT}/ShopCallsApi-IngestDlq`,
    DELIVERY_DLQ_URL: `${stubUrl}/${ACCOUNT}/ShopCallsApi-DeliveryDlq`,
    QUEUE_ARN: `arn:aws:sqs:${REGION}:${ACCOUNT}:ShopCallsApi-Deliveries`,
    SCHEDULER_GROUP: 'ShopCallsApi-Retries',
    SCHEDULER_ROLE_ARN: `arn:aws:iam::${ACCOUNT}:role/ShopCallsApi-SchedulerRole`,
    SCHEDULER_DLQ_ARN: `arn:aws:sqs:${REGION}:${ACCOUNT}:ShopCallsApi-SchedulerDlq`,
  };
  const value = values[name];
  if (value === undefined)
    throw new Error(
      `${name} is a deploy-time reference the cold-start benchmark does not fill in: ` +
        'add it to bench/lib/function-env.ts',
    );
  return value;
}

/** Lambda's own variables (the role's credentials among them), for a function called `name`. */
export function lambdaVariables(name: string, stub: { url: string }): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    TZ: ':UTC',
    AWS_REGION: REGION,
    AWS_DEFAULT_REGION: REGION,
    AWS_ACCESS_KEY_ID: 'ASIABENCHCOLDSTART00',
    AWS_SECRET_ACCESS_KEY: 'bench-cold-start-secret-access-key-000000',
    AWS_SESSION_TOKEN: 'bench-cold-start-session-token',
    AWS_LAMBDA_FUNCTION_NAME: `ShopCallsApi-${name}`,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256',
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
    _X_AMZN_TRACE_ID: 'Root=1-6745a1b2-0123456789abcdef01234567;Parent=0123456789abcdef;Sampled=1',
    // Every AWS service at the stub (the SDK honours it), and the webhook targets on loopback.
    AWS_ENDPOINT_URL: stub.url,
    WEBHOOK_ALLOW_INSECURE_LOCAL: 'true',
  };
}

/** Every function's environment, by construct id (as allFunctionEntries() names them). */
export function functionEnvironments(
  names: readonly string[],
  stub: { url: string; port: number },
): Record<string, Record<string, string>> {
  // Read from the template: CloudFormation's own checks at synth change nothing in it.
  const app = new App({
    builtinCloudFormationValidation: false,
    context: { 'aws:cdk:bundling-stacks': [], senderEmail: 'owner-mail@bench.test' },
  });
  const stack = new ShopCallsStack(app, 'ShopCallsApi', { env: { account: ACCOUNT, region: REGION } });
  const resources = Object.entries(Template.fromStack(stack).findResources('AWS::Lambda::Function')) as [
    string,
    { Properties: { Environment?: { Variables?: Record<string, unknown> } } },
  ][];
  const out: Record<string, Record<string, string>> = {};
  for (const name of names) {
    // Logical ids end with the construct id and an 8-digit hash (ApiGetShop67409717, DeliveryDeliverB9F0AABF).
    const found = resources.filter(([id]) => new RegExp(`${name}[0-9A-F]{8}$`).test(id));
    if (found.length !== 1) throw new Error(`${name}: ${found.length} functions in the synthesized stack`);
    const variables = found[0]?.[1].Properties.Environment?.Variables ?? {};
    const env = Object.fromEntries(
      Object.entries(variables).map(([k, v]) => [k, typeof v === 'string' ? v : resolved(k, stub.url)]),
    );
    // The Parameters and Secrets extension listens on this port; here the stub does.
    if (env.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT) env.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT = String(stub.port);
    out[name] = { ...lambdaVariables(name, stub), ...env };
  }
  return out;
}
