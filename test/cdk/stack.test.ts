import { App } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { applyNagPacks } from '../../lib/nag';
import { METRICS_NAMESPACE } from '../../shared/observability/delivery-metrics';
import { allFunctionEntries } from '../../lib/constructs/entries';
import { ShopCallsStack } from '../../lib/stack';
import { cdkApp, templateApp } from '../helpers/cdk-app';
import { portalRoute, routes } from '../../shared/routes';
import { FANOUT_FILTER_PATTERNS } from '../../shared/stream-filters';

type Resource = { Type: string; Properties: Record<string, unknown> };
type Statement = { Action: string | string[]; Resource: unknown; Effect: string; Condition?: unknown };

const synth = () => {
  const app = templateApp();
  const stack = new ShopCallsStack(app, 'Test', { env: { account: '123456789012', region: 'eu-west-1' } });
  return { app, stack, template: Template.fromStack(stack) };
};
const { template } = synth();
/** The same stack with its dashboard, which is off by default. */
const dashboardTemplate = () => {
  const app = templateApp({ dashboard: 'true' });
  return Template.fromStack(new ShopCallsStack(app, 'Test', { env: { account: '123456789012', region: 'eu-west-1' } }));
};
const resources = Object.entries(template.toJSON().Resources as Record<string, Resource>);
const ofType = (type: string) => resources.filter(([, r]) => r.Type === type);
const asArray = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);
const ref = (v: unknown): string => JSON.stringify(v);

/** The logical id of the function an integration or role belongs to. */
function functionOfRoute(routeKey: string): string {
  const [, routeRes] = ofType('AWS::ApiGatewayV2::Route').find(([, r]) => r.Properties.RouteKey === routeKey) ?? [];
  const target = ref(routeRes?.Properties.Target);
  const [, integration] = ofType('AWS::ApiGatewayV2::Integration').find(([id]) => target.includes(id)) ?? [];
  const uri = ref(integration?.Properties.IntegrationUri);
  const [fnId] = ofType('AWS::Lambda::Function').find(([id]) => uri.includes(`"${id}"`)) ?? [];
  return fnId as string;
}

function statementsOfFunction(fnId: string): Statement[] {
  const [, fn] = resources.find(([id]) => id === fnId) as [string, Resource];
  const roleId = ref(fn.Properties.Role).match(/"([A-Za-z0-9]+)"/)?.[1] as string;
  return ofType('AWS::IAM::Policy')
    .filter(([, p]) => ref(p.Properties.Roles).includes(`"${roleId}"`))
    .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

describe('cloud stack template', () => {
  it.each([
    ['a given account and region', { account: '123456789012', region: 'eu-west-1' }],
    ['an environment-agnostic stack with an SES sender', undefined],
  ])(
    'passes cdk-nag AwsSolutions and Serverless as bin/app.ts applies them, for %s (each acknowledgment has a reason)',
    (_label, env) => {
      const app = cdkApp(env ? {} : { senderEmail: 'alerts@shop.example' });
      new ShopCallsStack(app, 'Nag', { env });
      applyNagPacks(app);
      expect(() => app.synth()).not.toThrow();
    },
  );

  it('fails synth on a finding nobody acknowledged', () => {
    const app = cdkApp();
    const stack = new ShopCallsStack(app, 'Nag', { env: { account: '123456789012', region: 'eu-west-1' } });
    new Queue(stack, 'Unreviewed'); // no dead-letter queue, no TLS policy
    applyNagPacks(app);
    expect(() => app.synth()).toThrow(/Unreviewed/);
  });

  it("traces the API's functions, passes the delivery path's through unless fullTracing; JSON logs", () => {
    const fns = ofType('AWS::Lambda::Function');
    expect(fns).toHaveLength(Object.keys(allFunctionEntries()).length);
    const pipeline = /^(DeliveryFanout|DeliveryDeliver|DeliveryNotify|SweeperSweep|CallIngest)[0-9A-F]{8}$/;
    for (const [id, fn] of fns) {
      expect(fn.Properties.TracingConfig).toEqual({ Mode: pipeline.test(id) ? 'PassThrough' : 'Active' });
      expect(fn.Properties.LoggingConfig).toMatchObject({ LogFormat: 'JSON' });
    }
    expect(fns.filter(([id]) => pipeline.test(id))).toHaveLength(5);
    const full = templateApp({ fullTracing: 'true' });
    const fullFns = Template.fromStack(new ShopCallsStack(full, 'Full')).findResources('AWS::Lambda::Function');
    for (const fn of Object.values(fullFns)) expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
  });

  it('names the stack on every log line and custom metric (service): two stacks in one account stay apart', () => {
    for (const [, fn] of ofType('AWS::Lambda::Function'))
      expect(fn.Properties.Environment).toMatchObject({ Variables: { POWERTOOLS_SERVICE_NAME: 'Test' } });
    const body = ref(
      Object.values(dashboardTemplate().findResources('AWS::CloudWatch::Dashboard'))[0]?.Properties.DashboardBody,
    );
    expect(body).toContain('\\"service\\",\\"Test\\"');
    expect(body).not.toContain('shop-calls-api');
  });

  it('reserves no concurrency unless sweeperReservedConcurrency is set (new accounts cannot spare any)', () => {
    for (const [, fn] of ofType('AWS::Lambda::Function'))
      expect(fn.Properties.ReservedConcurrentExecutions).toBeUndefined();
    const reserved = templateApp({ sweeperReservedConcurrency: '1' });
    const fns = Object.entries(
      Template.fromStack(new ShopCallsStack(reserved, 'Reserved')).findResources('AWS::Lambda::Function'),
    );
    expect(
      fns
        .filter(([, fn]) => fn.Properties.ReservedConcurrentExecutions !== undefined)
        .map(([id, fn]) => [id.replace(/[0-9A-F]{8}$/, ''), fn.Properties.ReservedConcurrentExecutions]),
    ).toEqual([['SweeperSweep', 1]]);
  });

  it('lets CloudWatch alarms of this account publish to the alarm topic, over TLS only', () => {
    const policies = ofType('AWS::SNS::TopicPolicy');
    expect(policies).toHaveLength(1);
    const statements = (
      policies[0]?.[1].Properties.PolicyDocument as { Statement: (Statement & { Principal: unknown })[] }
    ).Statement;
    const allow = statements.filter((st) => st.Effect === 'Allow');
    expect(allow).toHaveLength(1);
    expect(allow[0]).toMatchObject({
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: 'sns:Publish',
      Condition: { StringEquals: { 'aws:SourceAccount': '123456789012' } },
    });
    expect(ref((allow[0]?.Condition as { ArnLike: unknown }).ArnLike)).toMatch(
      /"aws:SourceArn":"arn:aws:cloudwatch:eu-west-1:123456789012:alarm:\*"/,
    );
    const deny = statements.filter((st) => st.Effect === 'Deny');
    expect(deny).toHaveLength(1);
    expect(deny[0]).toMatchObject({ Principal: '*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } });
    const topicId = ofType('AWS::SNS::Topic')[0]?.[0];
    expect(ref(policies[0]?.[1].Properties.Topics)).toContain(`"${topicId}"`);
    for (const [, alarm] of ofType('AWS::CloudWatch::Alarm'))
      expect(ref(alarm.Properties.AlarmActions)).toContain(`"${topicId}"`);
  });

  it('keeps the alarm emails SNS could not deliver in a dead-letter queue, alarmed', () => {
    const app = templateApp({ alarmEmail: 'ops@shop.example' });
    const t = Template.fromStack(
      new ShopCallsStack(app, 'Email', { env: { account: '123456789012', region: 'eu-west-1' } }),
    );
    const [dlqId] = Object.keys(t.findResources('AWS::SQS::Queue')).filter((id) => id.startsWith('AlarmsEmailDlq'));
    expect(dlqId).toBeDefined();
    t.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] } },
    });
    const depth = Object.values(t.findResources('AWS::CloudWatch::Alarm')).filter(
      (a) =>
        a.Properties.MetricName === 'ApproximateNumberOfMessagesVisible' &&
        ref(a.Properties.Dimensions).includes(`"${dlqId}"`),
    );
    expect(depth).toHaveLength(1);
  });

  it('lets only the consumer loop through its own queue (its retries carry the trace header)', () => {
    const looping = ofType('AWS::Lambda::Function')
      .filter(([, fn]) => fn.Properties.RecursiveLoop === 'Allow')
      .map(([id]) => id);
    expect(looping).toHaveLength(1);
    expect(looping[0]).toMatch(/^DeliveryDeliver/);
  });

  it('alarms on stream iterator age, consumer duration against its timeout, API latency, throttles', () => {
    const alarms = ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    const fanoutId = ofType('AWS::Lambda::Function').find(([id]) => id.startsWith('DeliveryFanout'))?.[0];
    const deliverFn = ofType('AWS::Lambda::Function').find(([id]) => id.startsWith('DeliveryDeliver'));
    const iterator = alarms.filter((a) => a.MetricName === 'IteratorAge');
    expect(iterator).toHaveLength(1);
    expect(ref(iterator[0]?.Dimensions)).toContain(`"${fanoutId}"`);
    expect(iterator[0]).toMatchObject({ Statistic: 'Maximum', Threshold: 60000 });
    const duration = alarms.filter((a) => a.MetricName === 'Duration');
    expect(duration).toHaveLength(1);
    expect(ref(duration[0]?.Dimensions)).toContain(`"${deliverFn?.[0]}"`);
    expect(duration[0]?.Threshold).toBe((deliverFn?.[1].Properties.Timeout as number) * 1000 * 0.8);
    expect(alarms.filter((a) => a.MetricName === 'Latency')).toHaveLength(1);
    expect(
      alarms
        .filter((a) => a.Namespace === 'AWS/DynamoDB')
        .map((a) => a.MetricName)
        .sort(),
    ).toEqual(['ReadThrottleEvents', 'WriteThrottleEvents']);
  });

  it('has a dashboard of the API, the pipeline and the delivery metrics (EMF) only when asked', () => {
    expect(ofType('AWS::CloudWatch::Dashboard')).toHaveLength(0);
    const dashboards = Object.values(dashboardTemplate().findResources('AWS::CloudWatch::Dashboard'));
    expect(dashboards).toHaveLength(1);
    const body = ref(dashboards[0]?.Properties.DashboardBody);
    for (const metric of [
      'IteratorAge',
      'ApproximateAgeOfOldestMessage',
      'DeliverySucceeded',
      'DeliveryFailed',
      'DeliveryLatency',
      'CircuitOpened',
      'WriteThrottleEvents',
    ])
      expect(body).toContain(metric);
    expect(body).toContain(METRICS_NAMESPACE);
  });

  it('warns at synth when no alarmEmail is given, and subscribes it when one is', () => {
    const warnings = (app: App) =>
      Annotations.fromStack(app.node.findChild('S') as ShopCallsStack).findWarning(
        '*',
        Match.stringLikeRegexp('No alarmEmail'),
      );
    const without = cdkApp();
    new ShopCallsStack(without, 'S');
    expect(warnings(without)).toHaveLength(1);
    const withEmail = cdkApp({ alarmEmail: 'ops@shop.example' });
    new ShopCallsStack(withEmail, 'S');
    expect(warnings(withEmail)).toHaveLength(0);
    Template.fromStack(withEmail.node.findChild('S') as ShopCallsStack).hasResourceProperties(
      'AWS::SNS::Subscription',
      { Protocol: 'email', Endpoint: 'ops@shop.example' },
    );
  });

  it('has every function of the service, on Node.js 24 and arm64', () => {
    const fns = ofType('AWS::Lambda::Function').filter(([, r]) => r.Properties.Runtime === 'nodejs24.x');
    expect(fns).toHaveLength(Object.keys(allFunctionEntries()).length);
    for (const [, fn] of fns) expect(fn.Properties.Architectures).toEqual(['arm64']);
  });

  it('routes all 30 operations, each through the authorizer to its own function', () => {
    const authorizers = ofType('AWS::ApiGatewayV2::Authorizer');
    expect(authorizers).toHaveLength(1);
    // Uncached (it counts every request against its key's limit) and with no identity source, so a
    // request without Authorization still reaches it and gets the contract's 401.
    expect(authorizers[0]?.[1].Properties).toMatchObject({
      AuthorizerType: 'REQUEST',
      EnableSimpleResponses: true,
      AuthorizerResultTtlInSeconds: 0,
    });
    expect(authorizers[0]?.[1].Properties.IdentitySource).toBeUndefined();
    const fnIds = new Set<string>();
    for (const route of routes) {
      const routeKey = `${route.method} ${route.path}`;
      const [, r] = ofType('AWS::ApiGatewayV2::Route').find(([, x]) => x.Properties.RouteKey === routeKey) ?? [];
      expect(r?.Properties).toMatchObject({ AuthorizationType: 'CUSTOM' });
      fnIds.add(functionOfRoute(routeKey));
    }
    expect(fnIds.size).toBe(30);
    const fallback = ofType('AWS::ApiGatewayV2::Route').find(([, x]) => x.Properties.RouteKey === '$default');
    expect(fallback?.[1].Properties.AuthorizationType ?? 'NONE').toBe('NONE');
  });

  it('runs the per-key rate limits in the authorizer, whose only table write is the rate-limit buckets', () => {
    const [authorizerId, authorizerFn] =
      ofType('AWS::Lambda::Function').find(([id]) => id.startsWith('ApiAuthorizer')) ?? [];
    expect(authorizerFn?.Properties.Environment).toMatchObject({
      Variables: {
        RATE_LIMIT_TEST_PER_SECOND: '25',
        RATE_LIMIT_LIVE_PER_SECOND: '100',
        RATE_LIMIT_BURST_FACTOR: '2',
        RATE_LIMIT_AUTH_FAILURES_PER_SECOND: '10',
      },
    });
    const writes = statementsOfFunction(authorizerId as string).filter((s) =>
      asArray(s.Action).some((a) => a.startsWith('dynamodb:') && /Put|Update|Delete|Write/.test(a)),
    );
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatchObject({
      Action: 'dynamodb:UpdateItem',
      Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RATE#*'] } },
    });
  });

  it('serves the portal (GET, HEAD /portal and /portal/{file}) without the authorizer or data access', () => {
    const fnIds = new Set<string>();
    const routeKeys = ofType('AWS::ApiGatewayV2::Route').map(([, x]) => x.Properties.RouteKey as string);
    for (const path of portalRoute.paths) {
      for (const method of ['GET', 'HEAD']) {
        const [, r] =
          ofType('AWS::ApiGatewayV2::Route').find(([, x]) => x.Properties.RouteKey === `${method} ${path}`) ?? [];
        expect(r).toBeDefined();
        expect(r?.Properties.AuthorizationType ?? 'NONE').toBe('NONE');
        expect(r?.Properties.AuthorizerId).toBeUndefined();
        fnIds.add(functionOfRoute(`${method} ${path}`));
      }
      // Any other method falls to $default, whose fallback answers 405 with Allow.
      expect(routeKeys.filter((k) => k.endsWith(` ${path}`)).sort()).toEqual([`GET ${path}`, `HEAD ${path}`]);
    }
    expect(fnIds.size).toBe(1);
    const [fnId] = [...fnIds] as [string];
    expect(fnId).toMatch(/^ApiPortal/);
    const [, fn] = resources.find(([id]) => id === fnId) as [string, Resource];
    expect(Object.keys((fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables)).not.toContain(
      'TABLE_NAME',
    );
    // Its role may write its logs and traces only: no table, key or secret.
    const actions = statementsOfFunction(fnId).flatMap((s) => asArray(s.Action));
    expect(actions.filter((a) => !a.startsWith('logs:') && !a.startsWith('xray:'))).toEqual([]);
  });

  it('gives read-only operations no write permission on the table', () => {
    const writes = [
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:Scan',
    ];
    const gets = routes.filter((r) => r.method === 'GET');
    expect(gets.length).toBe(18);
    for (const route of gets) {
      const actions = statementsOfFunction(functionOfRoute(`${route.method} ${route.path}`)).flatMap((s) =>
        asArray(s.Action),
      );
      const reads = actions.filter((a) => ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchGetItem'].includes(a));
      // The event types answer from their catalog file: no table at all.
      if (route.operationId !== 'listEventTypes') expect(reads).not.toEqual([]);
      else expect(actions.filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
      for (const w of writes) expect(actions).not.toContain(w);
    }
  });

  it('lets exactly the list operations read the cursor key, through the Parameters and Secrets extension', () => {
    const lists = routes.filter((r) => r.secrets.includes('cursor'));
    expect(lists.map((r) => r.operationId).sort()).toEqual([
      'getEventFeed',
      'listCalls',
      'listEvents',
      'listJobs',
      'listPortalSessions',
      'listWebhookEndpointDeliveries',
    ]);
    for (const route of routes.filter((r) => r.handler)) {
      const fnId = functionOfRoute(`${route.method} ${route.path}`);
      const [, fn] = resources.find(([id]) => id === fnId) as [string, Resource];
      const env = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      const actions = statementsOfFunction(fnId).flatMap((s) => asArray(s.Action));
      if (lists.includes(route)) {
        expect(ref(fn.Properties.Layers)).toContain('AWS-Parameters-and-Secrets-Lambda-Extension-Arm64');
        expect(env).toMatchObject({
          PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: '2773',
          CURSOR_SECRET_ARN: expect.anything(),
        });
        expect(actions).toContain('secretsmanager:GetSecretValue');
      } else {
        expect(fn.Properties.Layers).toBeUndefined();
        expect(env.CURSOR_SECRET_ARN).toBeUndefined();
        expect(actions).not.toContain('secretsmanager:GetSecretValue');
      }
    }
  });

  it('has no IAM statement with a * action', () => {
    const statements = [
      ...ofType('AWS::IAM::Policy').flatMap(
        ([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement,
      ),
      ...ofType('AWS::IAM::Role').flatMap(([, r]) =>
        ((r.Properties.Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[]).flatMap(
          (p) => p.PolicyDocument.Statement,
        ),
      ),
    ];
    expect(statements.length).toBeGreaterThan(20);
    for (const action of statements.flatMap((s) => asArray(s.Action))) expect(action).not.toMatch(/(^\*$|:\*$)/);
  });

  it('lets the scheduler role only send to the delivery queue (and its own dead-letter queue)', () => {
    const [roleId] = ofType('AWS::IAM::Role').find(([id]) => id.startsWith('DeliverySchedulerRole')) ?? [];
    expect(ref(resources.find(([id]) => id === roleId)?.[1].Properties.AssumeRolePolicyDocument)).toContain(
      'scheduler.amazonaws.com',
    );
    const policies = ofType('AWS::IAM::Policy').filter(([, p]) => ref(p.Properties.Roles).includes(`"${roleId}"`));
    const statements = policies.flatMap(
      ([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement,
    );
    expect(statements).toHaveLength(1);
    expect(asArray(statements[0]?.Action)).toEqual(['sqs:SendMessage']);
    const targets = ref(statements[0]?.Resource);
    expect(targets).toMatch(/DeliveryDeliveries[0-9A-F]+/);
    expect(targets).toMatch(/DeliverySchedulerDlq[0-9A-F]+/);
    expect(asArray(statements[0]?.Resource as unknown[])).toHaveLength(2);
  });

  it('gives every asynchronous path a dead-letter queue or an on-failure destination', () => {
    const mappings = ofType('AWS::Lambda::EventSourceMapping');
    // The stream, the delivery queue, the owner emails' queue, and the ingest queue (test/cdk/ingest-queue.test.ts).
    expect(mappings).toHaveLength(4);
    const stream = mappings.find(([, m]) => ref(m.Properties.EventSourceArn).includes('StreamArn'))?.[1].Properties;
    expect(stream).toMatchObject({
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: 10,
    });
    expect(ref(stream?.DestinationConfig)).toMatch(/FanoutFailures/);
    // New events, rows redeliver and recover insert, and every write of a running recovery.
    expect(
      (stream?.FilterCriteria as { Filters: { Pattern: string }[] }).Filters.map(
        (f) => JSON.parse(f.Pattern) as unknown,
      ),
    ).toEqual([...FANOUT_FILTER_PATTERNS]);
    const sqs = mappings.find(([, m]) => ref(m.Properties.EventSourceArn).includes('DeliveryDeliveries'))?.[1]
      .Properties;
    expect(sqs).toMatchObject({
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 20 },
    });
    // No batching window: it would hold every delivery back by up to the window for fewer invocations.
    expect(sqs?.MaximumBatchingWindowInSeconds).toBeUndefined();
    const queues = ofType('AWS::SQS::Queue');
    const main = queues.filter(([id]) => id.includes('Deliveries'));
    expect(main).toHaveLength(1);
    expect(main[0]?.[1].Properties).toMatchObject({ VisibilityTimeout: 180, RedrivePolicy: { maxReceiveCount: 5 } });
    // Owner emails: their own queue (retried 5 times, then its dead-letter queue) and consumer.
    const emails = queues.find(([id]) => id.startsWith('DeliveryOwnerEmails'));
    expect(ref(emails?.[1].Properties.RedrivePolicy)).toMatch(/DeliveryNotifyDlq.*"maxReceiveCount":5/);
    expect(
      mappings.find(([, m]) => ref(m.Properties.EventSourceArn).includes('DeliveryOwnerEmails'))?.[1].Properties,
    ).toMatchObject({ FunctionResponseTypes: ['ReportBatchItemFailures'] });
    for (const [, q] of queues) expect(q.Properties.SqsManagedSseEnabled).toBe(true);
    const ingest = ofType('AWS::Lambda::Function').find(([id]) => id.includes('Ingest'));
    expect(ref(ingest?.[1].Properties.DeadLetterConfig)).toMatch(/IngestDlq/);
  });

  it('alarms on dead letters, old deliveries, 5xx, a stopped sweeper, Lambda errors and throttles', () => {
    const alarms = ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    // One per dead-letter queue: every queue but the ones functions consume.
    const consumed = ['DeliveryDeliveries', 'DeliveryOwnerEmails', 'CallIngestCalls'];
    const deadLetterQueues = ofType('AWS::SQS::Queue')
      .filter(([id]) => !consumed.some((prefix) => id.startsWith(prefix)))
      .map(([id]) => id);
    expect(deadLetterQueues).toHaveLength(6);
    const depthAlarms = alarms.filter((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible');
    expect(depthAlarms.map((a) => ref(a.Dimensions).match(/"([A-Za-z0-9]+)","QueueName"/)?.[1]).sort()).toEqual(
      deadLetterQueues.sort(),
    );
    // The delivery queue's and the ingest queue's.
    expect(alarms.filter((a) => a.MetricName === 'ApproximateAgeOfOldestMessage')).toHaveLength(2);
    expect(alarms.filter((a) => a.MetricName === '5xx')).toHaveLength(1);
    // The sweeper not running is an alarm too: no invocation in 10 minutes, missing data counting as such.
    const stopped = alarms.filter((a) => a.MetricName === 'Invocations');
    expect(stopped).toHaveLength(1);
    expect(stopped[0]).toMatchObject({
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      TreatMissingData: 'breaching',
      EvaluationPeriods: 2,
    });
    expect(ref(stopped[0]?.Dimensions)).toMatch(/SweeperSweep/);
    // Every function's, through Lambda's account-wide metrics (per function: test/cdk/idle-cost.test.ts).
    for (const metric of ['Errors', 'Throttles'])
      expect(alarms.filter((a) => a.MetricName === metric)).toEqual([
        expect.objectContaining({ Namespace: 'AWS/Lambda', Statistic: 'Sum', Threshold: 1 }),
      ]);
    expect(alarms.filter((a) => a.Namespace === 'AWS/Lambda' && a.Dimensions === undefined)).toHaveLength(2);
    expect(new Set(alarms.map((a) => ref(a.AlarmActions))).size).toBe(1);
  });

  it('throttles the stage, writes access logs, and outputs the API URL and table name', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      DefaultRouteSettings: { ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 },
      AccessLogSettings: { DestinationArn: {} },
    });
    const outputs = template.toJSON().Outputs as Record<string, unknown>;
    expect(Object.keys(outputs)).toEqual(
      expect.arrayContaining([
        'ApiUrl',
        'TableName',
        'Region',
        'SecretsKeyArn',
        'IngestQueueUrl',
        'IngestQueueArn',
        'IngestDlqUrl',
        'IngestFunctionArn',
        'AlarmTopicArn',
      ]),
    );
  });

  it("lets the voice platform's account invoke the ingest function only when ingestInvokerAccount is set", () => {
    expect(
      ofType('AWS::Lambda::Permission').filter(([, p]) => ref(p.Properties.FunctionName).includes('CallIngest')),
    ).toEqual([]);
    const app = templateApp({ ingestInvokerAccount: '210987654321' });
    const t = Template.fromStack(
      new ShopCallsStack(app, 'Platform', { env: { account: '123456789012', region: 'eu-west-1' } }),
    );
    const granted = Object.values(t.findResources('AWS::Lambda::Permission')).filter((p) =>
      ref(p.Properties.FunctionName).includes('CallIngest'),
    );
    expect(granted.map((p) => ({ Action: p.Properties.Action, Principal: p.Properties.Principal }))).toEqual([
      { Action: 'lambda:InvokeFunction', Principal: '210987654321' },
    ]);
  });

  it('reads its settings from context', () => {
    const app = templateApp({
      senderEmail: 'alerts@shop.example',
      consumerMaxConcurrency: '5',
      throttleRate: '50',
      rateLimitTest: '5',
      rateLimitLive: '50',
    });
    const t = Template.fromStack(
      new ShopCallsStack(app, 'Configured', { env: { account: '123456789012', region: 'eu-west-1' } }),
    );
    t.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { RATE_LIMIT_TEST_PER_SECOND: '5', RATE_LIMIT_LIVE_PER_SECOND: '50' } },
    });
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', { ScalingConfig: { MaximumConcurrency: 5 } });
    t.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { SES_FROM_ADDRESS: 'alerts@shop.example' } },
    });
    // Only the owner-email function may send, from that sender, through an address or a domain identity
    // (and sandbox recipients).
    const sesStatements = Object.values(t.toJSON().Resources as Record<string, Resource>)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap((p) =>
        (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement.map((st) => ({
          st,
          roles: ref(p.Properties.Roles),
        })),
      )
      .filter(({ st }) => asArray(st.Action).some((a) => a.startsWith('ses:')));
    expect(sesStatements).toHaveLength(1);
    expect(sesStatements[0]?.roles).toMatch(/DeliveryNotifyServiceRole/);
    expect(sesStatements[0]?.st).toMatchObject({
      Action: 'ses:SendEmail',
      Condition: { StringEquals: { 'ses:FromAddress': 'alerts@shop.example' } },
    });
    expect(ref(sesStatements[0]?.st.Resource)).toContain(':identity/*');
    expect(() => new ShopCallsStack(new App({ context: { throttleRate: 'lots' } }), 'Bad')).toThrow(/throttleRate/);
  });
});

describe('delivery sweeper', () => {
  const [sweepId, sweep] = ofType('AWS::Lambda::Function').find(([id]) => id.startsWith('SweeperSweep')) ?? [];
  const [scheduleId, schedule] = ofType('AWS::Scheduler::Schedule').find(([id]) => id.startsWith('Sweeper')) ?? [];
  const getAtt = (id: string | undefined) => ({ 'Fn::GetAtt': [id, 'Arn'] });
  const idOf = (prefix: string) => resources.find(([id]) => id.startsWith(prefix))?.[0];

  it('is a function of its own: 60 s, no async retries, with the queue and table it needs', () => {
    expect(sweep?.Properties).toMatchObject({
      Runtime: 'nodejs24.x',
      Timeout: 60,
      Environment: {
        Variables: {
          TABLE_NAME: {},
          QUEUE_URL: { Ref: idOf('DeliveryDeliveries') },
          QUEUE_ARN: getAtt(idOf('DeliveryDeliveries')),
          DELIVERY_TIMEOUT_MS: '10000',
        },
      },
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: sweepId },
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 60,
    });
  });

  it('is invoked every minute by an EventBridge Scheduler schedule with retries and a dead-letter queue', () => {
    expect(ofType('AWS::Scheduler::Schedule')).toHaveLength(1);
    expect(scheduleId).toBeDefined();
    expect(schedule?.Properties).toMatchObject({
      ScheduleExpression: 'rate(1 minute)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: {
        Arn: getAtt(sweepId),
        RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 60 },
        DeadLetterConfig: { Arn: getAtt(idOf('SweeperSweepScheduleDlq')) },
      },
    });
  });

  it('gives the schedule a role that may only invoke the sweeper (and send to its own dead-letter queue)', () => {
    const roleId = ref((schedule?.Properties.Target as { RoleArn: unknown }).RoleArn).match(
      /"([A-Za-z0-9]+)","Arn"/,
    )?.[1];
    const role = resources.find(([id]) => id === roleId)?.[1].Properties ?? {};
    const trust = (
      role.AssumeRolePolicyDocument as { Statement: (Statement & { Principal: unknown; Condition: unknown })[] }
    ).Statement;
    expect(trust).toHaveLength(1);
    expect(trust[0]).toMatchObject({ Action: 'sts:AssumeRole', Principal: { Service: 'scheduler.amazonaws.com' } });
    expect(ref(trust[0]?.Condition)).toMatch(/aws:SourceAccount.*aws:SourceArn.*schedule-group\/default/);
    expect(role.ManagedPolicyArns).toBeUndefined();
    expect(ofType('AWS::IAM::Policy').filter(([, p]) => ref(p.Properties.Roles).includes(`"${roleId}"`))).toHaveLength(
      0,
    );
    const statements = (role.Policies as { PolicyDocument: { Statement: Statement[] } }[]).flatMap(
      (p) => p.PolicyDocument.Statement,
    );
    expect(statements.map((s) => ({ Effect: s.Effect, Action: asArray(s.Action), Resource: s.Resource }))).toEqual([
      { Effect: 'Allow', Action: ['lambda:InvokeFunction'], Resource: getAtt(sweepId) },
      { Effect: 'Allow', Action: ['sqs:SendMessage'], Resource: getAtt(idOf('SweeperSweepScheduleDlq')) },
    ]);
  });

  it('lets the sweeper use the table, send to the delivery queue and drain its dead letters, no more', () => {
    const roleId = ref(sweep?.Properties.Role).match(/"([A-Za-z0-9]+)"/)?.[1];
    const role = resources.find(([id]) => id === roleId)?.[1].Properties ?? {};
    expect(ref(role.ManagedPolicyArns)).toBe(
      ref([
        {
          'Fn::Join': [
            '',
            ['arn:', { Ref: 'AWS::Partition' }, ':iam::aws:policy/service-role/AWSLambdaBasicExecutionRole'],
          ],
        },
      ]),
    );
    expect(role.Policies).toBeUndefined();
    const statements = statementsOfFunction(sweepId as string);
    const table = idOf('DataTable') as string;
    const queue = idOf('DeliveryDeliveries') as string;
    const deadLetters = idOf('DeliveryDeliveryDlq') as string;
    for (const s of statements) {
      expect(s.Effect).toBe('Allow');
      const actions = asArray(s.Action);
      if (actions.every((a) => a.startsWith('xray:'))) {
        expect(actions.sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
        continue;
      }
      const targets =
        ref(s.Resource)
          .match(/"Fn::GetAtt":\["([A-Za-z0-9]+)"/g)
          ?.map((m) => m.split('"')[3]) ?? [];
      expect(targets.length).toBeGreaterThan(0);
      if (actions.every((a) => a.startsWith('dynamodb:'))) expect(new Set(targets)).toEqual(new Set([table]));
      else if (targets.includes(deadLetters)) {
        // It drains the delivery dead-letter queue: receive and delete only.
        expect(actions.sort()).toEqual(['sqs:DeleteMessage', 'sqs:ReceiveMessage']);
        expect(targets).toEqual([deadLetters]);
      } else {
        expect(actions.sort()).toEqual(['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage']);
        expect(targets).toEqual([queue]);
      }
    }
    expect(sweep?.Properties.Environment).toMatchObject({ Variables: { DELIVERY_DLQ_URL: { Ref: deadLetters } } });
    expect(statements.flatMap((s) => asArray(s.Action))).toEqual(
      expect.arrayContaining([
        'dynamodb:Query',
        'dynamodb:BatchGetItem',
        'dynamodb:UpdateItem',
        'sqs:SendMessage',
        'sqs:ReceiveMessage',
        'sqs:DeleteMessage',
      ]),
    );
  });

  it('alarms on its dead letters, errors and throttles (account-wide, or its own with perFunctionAlarms)', () => {
    const alarms = ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    const on = (metric: string, id: string | undefined) =>
      alarms.filter((a) => a.MetricName === metric && ref(a.Dimensions).includes(`"${id}"`));
    expect(on('ApproximateNumberOfMessagesVisible', idOf('SweeperSweepScheduleDlq'))).toHaveLength(1);
    const app = templateApp({ perFunctionAlarms: 'true' });
    const perFunction = Object.values(
      Template.fromStack(
        new ShopCallsStack(app, 'Test', { env: { account: '123456789012', region: 'eu-west-1' } }),
      ).findResources('AWS::CloudWatch::Alarm'),
    ).map((a) => a.Properties as Record<string, unknown>);
    for (const metric of ['Errors', 'Throttles'])
      expect(
        perFunction.filter((a) => a.MetricName === metric && ref(a.Dimensions).includes(`"${sweepId}"`)),
      ).toHaveLength(1);
  });
});
