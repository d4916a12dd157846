import { Template } from 'aws-cdk-lib/assertions';
import { applyNagPacks } from '../../lib/nag';
import { ShopCallsStack } from '../../lib/stack';
import { cdkApp, templateApp } from '../helpers/cdk-app';

type Resource = { Type: string; Properties: Record<string, unknown> };
type Statement = {
  Sid?: string;
  Action: string | string[];
  Resource: unknown;
  Effect: string;
  Principal?: unknown;
  Condition?: unknown;
};

const ENV = { account: '123456789012', region: 'eu-west-1' };
const ref = (v: unknown): string => JSON.stringify(v);
const asArray = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);

function synth(context: Record<string, string> = {}) {
  const app = templateApp(context);
  const json = Template.fromStack(new ShopCallsStack(app, 'Test', { env: ENV })).toJSON() as {
    Resources: Record<string, Resource>;
    Outputs: Record<string, { Value: unknown }>;
  };
  const resources = Object.entries(json.Resources);
  const one = (type: string, prefix: string) => {
    const found = resources.filter(
      ([id, r]) =>
        r.Type === type &&
        id.startsWith(prefix) &&
        /^[A-Za-z]+[0-9A-F]{8}$/.test(id) &&
        id.length === prefix.length + 8,
    );
    expect(found).toHaveLength(1);
    return found[0] as [string, Resource];
  };
  const queuePolicy = (queueId: string) =>
    resources
      .filter(([, r]) => r.Type === 'AWS::SQS::QueuePolicy' && ref(r.Properties.Queues).includes(`"${queueId}"`))
      .flatMap(([, r]) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  return { resources, outputs: json.Outputs, one, queuePolicy };
}

describe("the voice platform's ingest queue", () => {
  const { resources, outputs, one, queuePolicy } = synth();
  const [queueId, queue] = one('AWS::SQS::Queue', 'CallIngestCalls');
  const [dlqId] = one('AWS::SQS::Queue', 'CallIngestIngestDlq');
  const [fnId, fn] = one('AWS::Lambda::Function', 'CallIngest');

  it("is encrypted, TLS-only, hides a message for 6 × the function's timeout, and dead-letters it after 5", () => {
    expect(queue.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      VisibilityTimeout: (fn.Properties.Timeout as number) * 6,
    });
    expect(queue.Properties.RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] },
      maxReceiveCount: 5,
    });
    const statements = queuePolicy(queueId);
    expect(statements).toEqual([
      expect.objectContaining({
        Effect: 'Deny',
        Principal: { AWS: '*' },
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
    ]);
  });

  it('feeds the ingest function in batches of 10 with partial batch responses, at most 10 batches at a time', () => {
    const mappings = resources.filter(
      ([, r]) =>
        r.Type === 'AWS::Lambda::EventSourceMapping' && ref(r.Properties.EventSourceArn).includes(`"${queueId}"`),
    );
    expect(mappings).toHaveLength(1);
    expect(mappings[0]?.[1].Properties).toMatchObject({
      FunctionName: { Ref: fnId },
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 10 },
    });
  });

  it('sets refused calls and failed asynchronous invocations aside in the same DLQ', () => {
    expect(fn.Properties.Environment).toMatchObject({ Variables: { INGEST_DLQ_URL: { Ref: dlqId } } });
    expect(fn.Properties.DeadLetterConfig).toEqual({ TargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] } });
  });

  it("gives the ingest role the event source's consume actions and SendMessage on its DLQ, no more of SQS", () => {
    const roleId = ref(fn.Properties.Role).match(/"([A-Za-z0-9]+)"/)?.[1] as string;
    const sqsStatements = resources
      .filter(([, r]) => r.Type === 'AWS::IAM::Policy' && ref(r.Properties.Roles).includes(`"${roleId}"`))
      .flatMap(([, r]) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
      .filter((st) => asArray(st.Action).some((a) => a.startsWith('sqs:')));
    const byQueue = Object.fromEntries(
      sqsStatements.map((st) => [
        ref(st.Resource).match(/"(CallIngest[A-Za-z]+[0-9A-F]{8})"/)?.[1],
        asArray(st.Action).sort(),
      ]),
    );
    expect(byQueue).toEqual({
      [queueId]: [
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:ReceiveMessage',
      ],
      [dlqId]: ['sqs:SendMessage'],
    });
  });

  it('alarms on messages in its DLQ and on calls waiting over 15 minutes, to the alarm topic', () => {
    const alarms = resources.filter(([, r]) => r.Type === 'AWS::CloudWatch::Alarm').map(([, r]) => r.Properties);
    const topicId = resources.find(([, r]) => r.Type === 'AWS::SNS::Topic')?.[0] as string;
    const dead = alarms.filter(
      (a) => a.MetricName === 'ApproximateNumberOfMessagesVisible' && ref(a.Dimensions).includes(`"${dlqId}"`),
    );
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Statistic: 'Maximum',
    });
    const waiting = alarms.filter(
      (a) => a.MetricName === 'ApproximateAgeOfOldestMessage' && ref(a.Dimensions).includes(`"${queueId}"`),
    );
    expect(waiting).toHaveLength(1);
    expect(waiting[0]).toMatchObject({ Threshold: 900, Statistic: 'Maximum' });
    for (const alarm of [...dead, ...waiting]) expect(ref(alarm.AlarmActions)).toContain(`"${topicId}"`);
  });

  it("outputs the queue's URL and ARN and the DLQ's URL", () => {
    expect(outputs.IngestQueueUrl?.Value).toEqual({ Ref: queueId });
    expect(outputs.IngestQueueArn?.Value).toEqual({ 'Fn::GetAtt': [queueId, 'Arn'] });
    expect(outputs.IngestDlqUrl?.Value).toEqual({ Ref: dlqId });
  });
});

describe('ingestSenderAccount', () => {
  it("lets that account's principals send to the ingest queue (and only send), keeping the TLS-only deny", () => {
    const { one, queuePolicy, resources } = synth({ ingestSenderAccount: '210987654321' });
    const [queueId] = one('AWS::SQS::Queue', 'CallIngestCalls');
    const statements = queuePolicy(queueId);
    const allow = statements.filter((st) => st.Effect === 'Allow');
    expect(allow).toHaveLength(1);
    expect(allow[0]).toMatchObject({
      Sid: 'VoicePlatformSendsCalls',
      Action: 'sqs:SendMessage',
      Resource: { 'Fn::GetAtt': [queueId, 'Arn'] },
    });
    expect(ref(allow[0]?.Principal)).toContain(':iam::210987654321:root');
    expect(statements.filter((st) => st.Effect === 'Deny')).toHaveLength(1);
    // The other queues' policies stay as they were.
    const others = resources.filter(
      ([, r]) => r.Type === 'AWS::SQS::QueuePolicy' && !ref(r.Properties.Queues).includes('CallIngestCalls'),
    );
    for (const [, p] of others) expect(ref(p.Properties.PolicyDocument)).not.toContain('210987654321');
  });

  it('is refused at synth unless it is a 12-digit account id, naming the setting', () => {
    expect(() => synth({ ingestSenderAccount: 'voice-platform' })).toThrow(
      /context ingestSenderAccount must be a 12-digit AWS account id/,
    );
  });

  it('synthesizes under cdk-nag with the sender and the invoker account together', () => {
    const app = cdkApp({
      ingestSenderAccount: '210987654321',
      ingestInvokerAccount: '210987654321',
    });
    new ShopCallsStack(app, 'Nag', { env: ENV });
    applyNagPacks(app);
    expect(() => app.synth()).not.toThrow();
  });
});
