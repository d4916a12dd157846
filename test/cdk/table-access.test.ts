import { Template } from 'aws-cdk-lib/assertions';
import { existsSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { FUNCTION_TABLE_PARTS, allFunctionEntries } from '../../lib/constructs/entries';
import { PART_STORES, STORE_ACTIONS } from '../../lib/constructs/table-access';
import { ShopCallsStack } from '../../lib/stack';
import { templateApp } from '../helpers/cdk-app';

type Resource = { Type: string; Properties: Record<string, unknown> };
type Statement = { Action: string | string[]; Resource: unknown; Effect: string; Condition?: Record<string, unknown> };

/** Code without comments, so a word in a comment is not read as a request. */
const code = (path: string) =>
  readFileSync(path, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');

/** The IAM action each kind of table request needs (a transaction: each item's). */
const REQUESTS: [RegExp, string][] = [
  [/\bdoc\.get\(|\bgetRecord(<[^>]*>)?\(/, 'GetItem'],
  [/\bdoc\.put\(|\bPut: \{/, 'PutItem'],
  [/\bdoc\.update\(|\bupdateIf\(|\bUpdate: \{/, 'UpdateItem'],
  [/\bdoc\.delete\(|\bDelete: [{\w]/, 'DeleteItem'],
  [/\bdoc\.query\(|\b(queryPrefix|queryPage|queryFilteredPage)(<[^>]*>)?\(/, 'Query'],
  [/\bdoc\.batchGet\(|\bbatchGet(<[^>]*>)?\(/, 'BatchGetItem'],
  [/\bdoc\.batchWrite\(/, 'BatchWriteItem'],
  [/\bConditionCheck: \{/, 'ConditionCheckItem'],
  [/\bdoc\.scan\(/, 'Scan'],
];

/** Where the store files live: the API's and the delivery engine's DynamoDB adapters (names are unique across both). */
const STORE_DIRS = ['shared/store', 'shared/delivery/dynamo'];
const storeFile = (store: string) =>
  STORE_DIRS.map((dir) => `${dir}/${store}.ts`).find((file) => existsSync(file)) ?? `shared/store/${store}.ts`;

/** Names a module in `dir` imports (values, not types) from each store module, by that module's file name. */
function importsOf(source: string, dir: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const m of source.matchAll(/^import \{([^}]*)\} from '([^']+)';/gm)) {
    const target = posix.join(dir, m[2] as string);
    if (!STORE_DIRS.includes(posix.dirname(target))) continue;
    const store = posix.basename(target);
    const names = (m[1] as string)
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n && !n.startsWith('type '));
    found.set(store, [...(found.get(store) ?? []), ...names]);
  }
  return found;
}

describe('table access per function', () => {
  it('declares for every table-backed function exactly the wiring parts its handler passes to lambdaDeps', () => {
    const declared: Record<string, string[]> = {};
    for (const [id, entry] of Object.entries(allFunctionEntries())) {
      const call = code(entry).match(/lambdaDeps\(([^)]*)\)/);
      if (call)
        declared[id] = (call[1] as string)
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
    }
    expect(declared).toEqual(
      Object.fromEntries(Object.entries(FUNCTION_TABLE_PARTS).map(([id, parts]) => [id, [...parts]])),
    );
  });

  it('declares for every wiring part exactly the stores it builds', () => {
    for (const file of ['shared/wiring/api.ts', 'shared/wiring/pipeline.ts']) {
      const source = code(file);
      const stores = importsOf(source, posix.dirname(file));
      for (const m of source.matchAll(/^export function (\w+Deps)\(/gm)) {
        const part = m[1] as string;
        // Every part at once, for the local stack, the operator CLI and tests: no function is wired from it.
        if (part === 'apiDeps') continue;
        const start = m.index;
        const next = source.indexOf('\nexport function ', start + 1);
        const body = source.slice(start, next < 0 ? undefined : next);
        const used = [...stores]
          .filter(([, names]) => names.some((n) => new RegExp(`\\b${n}\\b`).test(body)))
          .map(([store]) => store);
        expect({ part, stores: used.sort() }).toEqual({
          part,
          stores: [...(PART_STORES[part] ?? ['(undeclared)'])].sort(),
        });
      }
    }
  });

  it("declares every store's requests and the stores it builds on; only the operator CLI's scans", () => {
    const storeFiles = Object.keys(STORE_ACTIONS);
    for (const store of storeFiles) {
      const file = storeFile(store);
      const source = code(file);
      const actions = REQUESTS.filter(([re]) => re.test(source)).map(([, action]) => action);
      const uses = [...importsOf(source, posix.dirname(file))]
        .filter(
          // A store class it builds on, or a store module's read function it calls (readEndpoint).
          ([from, names]) =>
            storeFiles.includes(from) && names.some((n) => /^Dynamo\w+(Store|Ledger|Index)$|^read[A-Z]\w*$/.test(n)),
        )
        .map(([from]) => from);
      expect({ store, actions: actions.sort(), uses: uses.sort() }).toEqual({
        store,
        actions: [...(STORE_ACTIONS[store]?.actions ?? [])].sort(),
        uses: [...(STORE_ACTIONS[store]?.uses ?? [])].sort(),
      });
    }
    expect(REQUESTS.filter(([re]) => re.test(code('shared/store/operator-scan.ts'))).map(([, a]) => a)).toEqual([
      'Scan',
    ]);
  });
});

describe('least privilege in the template', () => {
  const app = templateApp();
  const template = Template.fromStack(
    new ShopCallsStack(app, 'Test', { env: { account: '123456789012', region: 'eu-west-1' } }),
  ).toJSON();
  const resources = Object.entries(template.Resources as Record<string, Resource>);
  const statementsOfRole = (roleId: string): Statement[] =>
    resources
      .filter(([, p]) => p.Type === 'AWS::IAM::Policy' && JSON.stringify(p.Properties.Roles).includes(`"${roleId}"`))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  const functions = resources
    .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
    .map(([id, fn]) => ({
      id: id.replace(/[0-9A-F]{8}$/, ''),
      statements: statementsOfRole(JSON.stringify(fn.Properties.Role).match(/"([A-Za-z0-9]+)"/)?.[1] as string),
    }));
  const actionsOf = (statements: Statement[], service: string) =>
    [
      ...new Set(
        statements
          .flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]))
          .filter((a) => a.startsWith(`${service}:`)),
      ),
    ].sort();
  const streamReads = new Set([
    'dynamodb:DescribeStream',
    'dynamodb:GetRecords',
    'dynamodb:GetShardIterator',
    'dynamodb:ListStreams',
  ]);

  it('grants each function the table actions of its stores, and no other (a widening shows here in review)', () => {
    const reads = ['GetItem', 'Query'];
    const endpointReads = ['BatchGetItem', 'GetItem', 'Query'];
    const endpointWrites = ['BatchGetItem', 'DeleteItem', 'GetItem', 'PutItem', 'Query', 'UpdateItem'];
    const allButScan = ['BatchGetItem', 'BatchWriteItem', 'DeleteItem', 'GetItem', 'PutItem', 'Query', 'UpdateItem'];
    const jobWrites = ['DeleteItem', 'GetItem', 'PutItem', 'Query', 'UpdateItem'];
    // The sweeper and recover read endpoints and write no endpoint item.
    const sweepWrites = ['BatchGetItem', 'DeleteItem', 'GetItem', 'PutItem', 'Query', 'UpdateItem'];
    expect(
      Object.fromEntries(
        functions.map((f) => [
          f.id,
          actionsOf(f.statements, 'dynamodb')
            .filter((a) => !streamReads.has(a))
            .map((a) => a.slice('dynamodb:'.length)),
        ]),
      ),
    ).toEqual({
      ApiAuthorizer: ['GetItem', 'Query', 'UpdateItem'],
      ApiFallback: [],
      ApiPortal: [],
      ApiCreateWebhookEndpoint: endpointWrites,
      ApiListWebhookEndpoints: endpointReads,
      ApiGetWebhookEndpoint: ['BatchGetItem', 'Query'],
      ApiUpdateWebhookEndpoint: allButScan,
      ApiDeleteWebhookEndpoint: allButScan,
      ApiListWebhookEndpointDeliveries: ['BatchGetItem', 'Query'],
      ApiGetWebhookEndpointStats: endpointReads,
      ApiGetWebhookEndpointRecovery: endpointReads,
      ApiRecoverWebhookEndpoint: sweepWrites,
      ApiRotateWebhookEndpointSecret: endpointWrites,
      ApiTestWebhookEndpoint: endpointWrites,
      ApiListEvents: endpointReads,
      ApiGetEvent: endpointReads,
      ApiGetEventFeed: ['BatchGetItem', 'Query'],
      ApiListEventTypes: [],
      ApiRedeliverEvent: allButScan,
      ApiCreatePortalSession: ['DeleteItem', 'GetItem', 'PutItem', 'Query', 'UpdateItem'],
      ApiListPortalSessions: reads,
      ApiDeletePortalSession: ['DeleteItem', 'GetItem', 'PutItem', 'Query', 'UpdateItem'],
      ApiListCalls: reads,
      ApiGetCall: reads,
      ApiGetCallTranscript: reads,
      ApiGetCallSummary: reads,
      ApiListJobs: reads,
      ApiGetJob: reads,
      ApiApproveJob: jobWrites,
      ApiDeclineJob: jobWrites,
      ApiGetShop: ['GetItem'],
      ApiUpdateShop: ['DeleteItem', 'GetItem', 'PutItem', 'UpdateItem'],
      ApiGetMe: ['GetItem'],
      DeliveryNotify: endpointWrites,
      DeliveryFanout: allButScan,
      DeliveryDeliver: ['BatchGetItem', 'GetItem', 'PutItem', 'Query', 'UpdateItem'],
      CallIngest: ['GetItem', 'PutItem', 'Query', 'UpdateItem'],
      // The sweeper deletes nothing: a row leaves the due index by its own update.
      SweeperSweep: ['BatchGetItem', 'GetItem', 'PutItem', 'Query', 'UpdateItem'],
    });
  });

  it('lets no Lambda role scan the table, and only the fan-out read its stream', () => {
    const scanning = resources.filter(
      ([, r]) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.PolicyDocument).includes('dynamodb:Scan'),
    );
    expect(scanning).toEqual([]);
    expect(
      functions
        .filter((f) => f.statements.some((s) => [s.Action].flat().some((a) => streamReads.has(a))))
        .map((f) => f.id),
    ).toEqual(['DeliveryFanout']);
  });

  it("lets KMS seal and open secrets only under the shop's encryption context", () => {
    const kmsUsers = functions.filter((f) => actionsOf(f.statements, 'kms').length > 0);
    expect(Object.fromEntries(kmsUsers.map((f) => [f.id, actionsOf(f.statements, 'kms')]))).toEqual({
      ApiCreateWebhookEndpoint: ['kms:Decrypt', 'kms:GenerateDataKey'],
      ApiCreatePortalSession: ['kms:Decrypt', 'kms:GenerateDataKey'],
      ApiRecoverWebhookEndpoint: ['kms:Decrypt', 'kms:GenerateDataKey'],
      ApiRotateWebhookEndpointSecret: ['kms:Decrypt', 'kms:GenerateDataKey'],
      ApiApproveJob: ['kms:Decrypt', 'kms:GenerateDataKey'],
      ApiDeclineJob: ['kms:Decrypt', 'kms:GenerateDataKey'],
      ApiUpdateShop: ['kms:Decrypt', 'kms:GenerateDataKey'],
      DeliveryDeliver: ['kms:Decrypt'],
    });
    // One statement per action, or both in one where IAM policy minimizing merges them: the same condition.
    for (const f of kmsUsers) {
      for (const s of f.statements.filter((st) => [st.Action].flat().some((a) => a.startsWith('kms:')))) {
        expect(s.Condition).toEqual({
          'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['shop_id'] },
          Null: { 'kms:EncryptionContext:shop_id': 'false' },
        });
      }
    }
  });

  it("lets only this account's retry schedule group assume the retry scheduler role", () => {
    const [, role] = resources.find(([id]) => id.startsWith('DeliverySchedulerRole')) as [string, Resource];
    const [groupId] = resources.find(([, r]) => r.Type === 'AWS::Scheduler::ScheduleGroup') as [string, Resource];
    const trust = (role.Properties.AssumeRolePolicyDocument as { Statement: Statement[] }).Statement;
    expect(trust).toHaveLength(1);
    expect(trust[0]?.Condition).toEqual({
      StringEquals: {
        'aws:SourceAccount': { Ref: 'AWS::AccountId' },
        'aws:SourceArn': { 'Fn::GetAtt': [groupId, 'Arn'] },
      },
    });
  });
});
