import { Template } from 'aws-cdk-lib/assertions';
import { readFileSync } from 'node:fs';
import { allFunctionEntries } from '../../lib/constructs/entries';
import { ShopCallsStack } from '../../lib/stack';
import { templateApp } from '../helpers/cdk-app';
import { DUE_BUCKETS } from '../../shared/store/keys';

/**
 * What a deployed stack costs a month with no traffic, from its template and AWS's list prices
 * (us-east-1, no free tier). docs/capacity.md (Idle cost) states the same arithmetic.
 */
const MINUTES_A_MONTH = 730 * 60;
const PRICE = {
  /** Standard resolution, a month. A metric-math alarm pays for every metric it reads (CloudWatch pricing). */
  alarmMetric: 0.1,
  highResolutionAlarmMetric: 0.3,
  compositeAlarm: 0.5,
  dashboard: 3,
  /** A month; each of the first two yearly rotations adds $1 more, later ones nothing. */
  kmsKey: 1,
  secret: 0.4,
  sqsRequest: 0.4e-6,
  schedulerInvocation: 1e-6,
  lambdaRequest: 0.2e-6,
  lambdaArmGbSecond: 0.0000133334,
  readRequestUnit: 0.125e-6,
  logByte: 0.5e-9,
};
/**
 * An SQS event source mapping long-polls its queue even when it is empty: 20 s a receive, 5
 * pollers, or as few as 2 where no maximum concurrency is set (Lambda's SQS scaling docs).
 */
const receivesAMonth = (maxConcurrency: unknown) => (maxConcurrency === undefined ? 2 : 5) * 3 * MINUTES_A_MONTH;
/**
 * An idle sweep: one query per due bucket and one of stalled recoveries (0.5 RRU each), one
 * empty receive, Lambda's 3 lines.
 */
const IDLE_SWEEP = { seconds: 0.2, readUnits: (DUE_BUCKETS + 1) * 0.5, receives: 1, logBytes: 648 };

type Resource = { Type: string; Properties: Record<string, unknown> };

/** Alarm metrics CloudWatch bills for one alarm: its metric, or each metric its math reads. */
function billedMetrics(alarm: Resource['Properties']): number {
  const metrics = alarm.Metrics as { MetricStat?: unknown; Expression?: string }[] | undefined;
  if (!metrics) return 1;
  // A Metrics Insights query is billed by the metrics it matches, which the template cannot tell.
  if (metrics.some((m) => /\bSELECT\b/i.test(m.Expression ?? ''))) throw new Error('Metrics Insights alarm');
  return metrics.filter((m) => m.MetricStat !== undefined).length;
}

function idleCost(template: Template, keyRotations = 0) {
  const resources = Object.entries(template.toJSON().Resources as Record<string, Resource>);
  const of = (type: string) => resources.filter(([, r]) => r.Type === type).map(([, r]) => r.Properties);
  const queues = new Set(resources.filter(([, r]) => r.Type === 'AWS::SQS::Queue').map(([id]) => id));
  const alarms = of('AWS::CloudWatch::Alarm');
  const alarmMetrics = alarms.reduce((n, a) => n + billedMetrics(a), 0);
  const highResolution = alarms.filter((a) => Number(a.Period ?? 60) < 60).reduce((n, a) => n + billedMetrics(a), 0);
  // Lambda reads the table's stream for free; it pays SQS for every receive from a queue.
  const polls = of('AWS::Lambda::EventSourceMapping')
    .filter((m) => queues.has((m.EventSourceArn as { 'Fn::GetAtt'?: string[] })['Fn::GetAtt']?.[0] ?? ''))
    .map((m) => (m.ScalingConfig as { MaximumConcurrency?: number } | undefined)?.MaximumConcurrency)
    .reduce<number>((n, maxConcurrency) => n + receivesAMonth(maxConcurrency), 0);
  const sweeper = Object.entries(template.findResources('AWS::Lambda::Function')).find(([id]) =>
    id.startsWith('SweeperSweep'),
  )?.[1].Properties as { MemorySize: number };
  const schedules = of('AWS::Scheduler::Schedule');
  expect(schedules.map((s) => s.ScheduleExpression)).toEqual(['rate(1 minute)']);
  const sweep =
    PRICE.schedulerInvocation +
    PRICE.lambdaRequest +
    (sweeper.MemorySize / 1024) * IDLE_SWEEP.seconds * PRICE.lambdaArmGbSecond +
    IDLE_SWEEP.readUnits * PRICE.readRequestUnit +
    IDLE_SWEEP.receives * PRICE.sqsRequest +
    IDLE_SWEEP.logBytes * PRICE.logByte;
  const items = {
    alarms: (alarmMetrics - highResolution) * PRICE.alarmMetric + highResolution * PRICE.highResolutionAlarmMetric,
    compositeAlarms: of('AWS::CloudWatch::CompositeAlarm').length * PRICE.compositeAlarm,
    dashboards: of('AWS::CloudWatch::Dashboard').length * PRICE.dashboard,
    keys: of('AWS::KMS::Key').length * (PRICE.kmsKey + Math.min(keyRotations, 2)),
    secrets: of('AWS::SecretsManager::Secret').length * PRICE.secret,
    queuePolling: polls * PRICE.sqsRequest,
    sweeper: MINUTES_A_MONTH * sweep,
  };
  const total = Object.values(items).reduce((a, b) => a + b, 0);
  return { alarms: alarms.length, alarmMetrics, items, total };
}

const synth = (context: Record<string, string> = {}) => {
  const app = templateApp(context);
  return Template.fromStack(new ShopCallsStack(app, 'Idle', { env: { account: '123456789012', region: 'eu-west-1' } }));
};
const dollars = (n: number) => `$${n.toFixed(2)}`;

describe('the idle cost of a deployed stack', () => {
  const template = synth();
  const perFunctionTemplate = synth({ perFunctionAlarms: 'true' });
  const defaults = idleCost(template);
  const withEmail = idleCost(synth({ alarmEmail: 'oncall@shop.example' }));

  it('is at most $6 a month by default, alarm email included: every alarm reads one metric', () => {
    expect(defaults.alarmMetrics).toBe(defaults.alarms);
    expect(defaults.alarms).toBe(17);
    expect(defaults.items.dashboards).toBe(0);
    expect(defaults.total).toBeLessThanOrEqual(6);
    expect(withEmail.alarmMetrics).toBe(18);
    expect(withEmail.total).toBeLessThanOrEqual(6);
  });

  it('is stated with its arithmetic in docs/capacity.md and docs/deploy.md', () => {
    const capacity = readFileSync('docs/capacity.md', 'utf8');
    const section = capacity.slice(
      capacity.indexOf('## Idle cost'),
      capacity.indexOf('\n## ', capacity.indexOf('## Idle cost') + 1),
    );
    const { items } = defaults;
    for (const figure of [
      `${defaults.alarmMetrics} alarm metrics`,
      dollars(items.alarms),
      dollars(items.queuePolling),
      dollars(items.sweeper),
      `**${dollars(defaults.total)}**`,
      `${dollars(withEmail.total)}`,
      dollars(idleCost(template, 2).total),
      dollars(idleCost(perFunctionTemplate).total),
      dollars(idleCost(synth({ dashboard: 'true' })).total),
    ])
      expect([figure, section.includes(figure)]).toEqual([figure, true]);
    expect(readFileSync('docs/deploy.md', 'utf8')).toContain(dollars(defaults.total));
  });

  it('with perFunctionAlarms, an errors and a throttles alarm per function replace the account-wide two', () => {
    const alarms = Object.values(perFunctionTemplate.findResources('AWS::CloudWatch::Alarm')).map(
      (a) => (a as Resource).Properties,
    );
    const functions = Object.keys(perFunctionTemplate.findResources('AWS::Lambda::Function'));
    expect(functions).toHaveLength(Object.keys(allFunctionEntries()).length);
    for (const metric of ['Errors', 'Throttles']) {
      const perFunction = alarms.filter((a) => a.Namespace === 'AWS/Lambda' && a.MetricName === metric);
      expect(perFunction.map((a) => JSON.stringify(a.Dimensions).match(/"Ref":"([A-Za-z0-9]+)"/)?.[1]).sort()).toEqual(
        [...functions].sort(),
      );
    }
    expect(idleCost(perFunctionTemplate).alarmMetrics).toBe(defaults.alarmMetrics - 2 + 2 * functions.length);
  });
});
