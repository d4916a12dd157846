import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { ShopCallsStack } from '../../lib/stack';
import { createTableInput } from '../../shared/store/table';

describe('the table in the cloud stack', () => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const template = Template.fromStack(new ShopCallsStack(app, 'Test'));

  it('has the same keys, indexes and stream as the local stack\'s table', () => {
    const local = createTableInput('x');
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: local.KeySchema,
      AttributeDefinitions: local.AttributeDefinitions,
      GlobalSecondaryIndexes: local.GlobalSecondaryIndexes?.map((gsi) => ({ IndexName: gsi.IndexName, KeySchema: gsi.KeySchema, Projection: gsi.Projection })),
      StreamSpecification: { StreamViewType: local.StreamSpecification?.StreamViewType },
      TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
      BillingMode: 'PAY_PER_REQUEST',
    });
  });

  it('keeps data: deletion protection, point-in-time recovery, retained on stack deletion', () => {
    template.hasResource('AWS::DynamoDB::GlobalTable', {
      DeletionPolicy: 'Retain',
      Properties: {
        Replicas: [Match.objectLike({ DeletionProtectionEnabled: true, PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } })],
      },
    });
  });
});
