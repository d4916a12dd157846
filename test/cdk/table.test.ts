import { Match, Template } from 'aws-cdk-lib/assertions';
import { ShopCallsStack } from '../../lib/stack';
import { templateApp } from '../helpers/cdk-app';
import { createTableInput, DATA_MODEL_VERSION } from '../../shared/store/table';

describe('the table in the cloud stack', () => {
  const app = templateApp();
  const template = Template.fromStack(new ShopCallsStack(app, 'Test'));

  it("has the same keys, indexes and stream as the local stack's table", () => {
    const local = createTableInput('x');
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: local.KeySchema,
      AttributeDefinitions: local.AttributeDefinitions,
      GlobalSecondaryIndexes: local.GlobalSecondaryIndexes?.map((gsi) => ({
        IndexName: gsi.IndexName,
        KeySchema: gsi.KeySchema,
        Projection: gsi.Projection,
      })),
      StreamSpecification: { StreamViewType: local.StreamSpecification?.StreamViewType },
      TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
      BillingMode: 'PAY_PER_REQUEST',
    });
  });

  it('has the due index gsi2, projecting only what a queue message and the sweep need', () => {
    const [table] = Object.values(template.findResources('AWS::DynamoDB::GlobalTable')) as {
      Properties: {
        GlobalSecondaryIndexes: {
          IndexName: string;
          KeySchema: unknown;
          Projection: { ProjectionType: string; NonKeyAttributes?: string[] };
        }[];
      };
    }[];
    const byName = Object.fromEntries(
      (table?.Properties.GlobalSecondaryIndexes ?? []).map((gsi) => [gsi.IndexName, gsi]),
    );
    // No index of every delivery: an endpoint's rows sit under it (keys.delivery), so no row's write pays for one.
    expect(Object.keys(byName)).toEqual(['gsi1', 'gsi2']);
    expect(byName.gsi1?.Projection).toEqual({ ProjectionType: 'ALL' });
    expect(byName.gsi2?.KeySchema).toEqual([
      { AttributeName: 'gsi2pk', KeyType: 'HASH' },
      { AttributeName: 'gsi2sk', KeyType: 'RANGE' },
    ]);
    expect(byName.gsi2?.Projection.ProjectionType).toBe('INCLUDE');
    expect([...(byName.gsi2?.Projection.NonKeyAttributes ?? [])].sort()).toEqual([
      'attempts',
      'endpoint_id',
      'event_id',
      'id',
      'next_attempt_at',
      'shop_id',
      'status',
    ]);
  });

  it('records the data-model version in a tag, for a later release to migrate from', () => {
    expect(DATA_MODEL_VERSION).toBe(3);
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      Replicas: [Match.objectLike({ Tags: [{ Key: 'data-model-version', Value: '3' }] })],
    });
  });

  it('keeps data: deletion protection, point-in-time recovery, retained on stack deletion', () => {
    template.hasResource('AWS::DynamoDB::GlobalTable', {
      DeletionPolicy: 'Retain',
      Properties: {
        Replicas: [
          Match.objectLike({
            DeletionProtectionEnabled: true,
            PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          }),
        ],
      },
    });
  });
});
