import { RemovalPolicy } from 'aws-cdk-lib';
import {
  AttributeType,
  Billing,
  ProjectionType,
  StreamViewType,
  TableV2,
  type GlobalSecondaryIndexPropsV2,
} from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { DATA_MODEL_VERSION, DATA_MODEL_VERSION_TAG, TABLE, type IndexProjection } from '../../shared/store/table';

/** An index copies every attribute unless its description in TABLE says which (INCLUDE). */
function projectionProps(
  projection: IndexProjection | undefined,
): Pick<GlobalSecondaryIndexPropsV2, 'projectionType' | 'nonKeyAttributes'> {
  if (!projection || projection.type === 'ALL') return { projectionType: ProjectionType.ALL };
  return { projectionType: ProjectionType.INCLUDE, nonKeyAttributes: [...projection.attributes] };
}

/**
 * The service's single table, built from shared/store/table.ts (the same description the
 * local stack's CreateTable uses). Data outlives the stack: RETAIN and deletion protection.
 */
export class ServiceTable extends Construct {
  readonly table: TableV2;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      timeToLiveAttribute: TABLE.ttlAttribute,
      dynamoStream: StreamViewType[TABLE.streamView],
      // 0.x releases migrate nothing; the tag lets a later release tell which layout a table holds.
      tags: [{ key: DATA_MODEL_VERSION_TAG, value: String(DATA_MODEL_VERSION) }],
      // DynamoDB adds at most one index per table update: append new indexes one deploy at a time.
      globalSecondaryIndexes: TABLE.globalIndexes.map((gsi) => ({
        indexName: gsi.name,
        partitionKey: { name: gsi.partitionKey, type: AttributeType.STRING },
        sortKey: { name: gsi.sortKey, type: AttributeType.STRING },
        ...projectionProps(gsi.projection),
      })),
    });
  }
}
