import { readFileSync } from 'node:fs';
import { applyNagPacks } from '../../lib/nag';
import { ShopCallsStack } from '../../lib/stack';
import { cdkApp } from '../helpers/cdk-app';

/** A non-default value of every setting docs/deploy.md documents; `stackName` is the stack's id, as bin/app.ts reads it. */
const EXAMPLES: Record<string, string> = {
  senderEmail: 'alerts@shop.example',
  alarmEmail: 'oncall@shop.example',
  logRetentionDays: '14',
  logLevel: 'DEBUG',
  throttleRate: '50',
  throttleBurst: '100',
  rateLimitTest: '5',
  rateLimitLive: '50',
  rateLimitBurstFactor: '3',
  rateLimitAuthFailures: '4',
  consumerMaxConcurrency: '5',
  deliveryTimeoutMs: '15000',
  sourceMaps: 'true',
  sweeperReservedConcurrency: '1',
  fullTracing: 'true',
  platformLogs: 'true',
  recoverTimeoutSeconds: '20',
  stackName: 'ShopCallsStaging',
  ingestSenderAccount: '210987654321',
  ingestInvokerAccount: '210987654321',
  perFunctionAlarms: 'true',
  dashboard: 'true',
};

/** The keys of the Configure table in docs/deploy.md (`| \`key\` |` rows; `a` / `b` rows name two). */
function documentedKeys(): string[] {
  const doc = readFileSync('docs/deploy.md', 'utf8');
  const section = doc.slice(doc.indexOf('## Configure'), doc.indexOf('\n## ', doc.indexOf('## Configure') + 1));
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => (line.split('|')[1] ?? '').match(/`([A-Za-z]+)`/g) ?? [])
    .map((k) => k.slice(1, -1));
}

function synthWithNag(context: Record<string, string>, env?: { account: string; region: string }): void {
  const { stackName, ...rest } = context;
  const app = cdkApp(rest);
  new ShopCallsStack(app, stackName ?? 'ShopCallsApi', { env });
  applyNagPacks(app);
  app.synth();
}

describe('deploy settings under cdk-nag', () => {
  it('has an example for exactly the settings docs/deploy.md documents', () => {
    expect(documentedKeys().sort()).toEqual(Object.keys(EXAMPLES).sort());
  });

  it.each(Object.entries(EXAMPLES))('synthesizes with %s=%s alone', (key, value) => {
    expect(() => synthWithNag({ [key]: value })).not.toThrow();
  });

  it.each([
    ['an environment-agnostic stack', undefined],
    ['a given account and region', { account: '123456789012', region: 'eu-west-1' }],
  ])('synthesizes with every setting together, for %s', (_label, env) => {
    expect(() => synthWithNag(EXAMPLES, env)).not.toThrow();
  });
});
