import type { CreateTableCommandInput, Projection } from '@aws-sdk/client-dynamodb';

/** What a global secondary index copies from the item: everything, or the keys plus these attributes. */
export type IndexProjection = { type: 'ALL' } | { type: 'INCLUDE'; attributes: readonly string[] };

export interface GlobalIndex {
  name: string;
  partitionKey: string;
  sortKey: string;
  projection: IndexProjection;
}

/**
 * The single table, described once. The CDK table construct and the local stack's
 * CreateTable both read this, so the two cannot drift. See docs/data-model.md.
 */
export const TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch seconds; DynamoDB TTL deletes the item some time after it passes. */
  ttlAttribute: 'expires_at',
  globalIndexes: [
    { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk', projection: { type: 'ALL' } },
    /**
     * The due index: only open deliveries carry gsi2pk/gsi2sk (sparse), spread over a few
     * bucket partitions, sorted by when the sweeper must look at them. It holds just what
     * a queue message needs, so a write to a row's attempt log does not rewrite the index.
     */
    {
      name: 'gsi2',
      partitionKey: 'gsi2pk',
      sortKey: 'gsi2sk',
      projection: {
        type: 'INCLUDE',
        attributes: ['shop_id', 'event_id', 'id', 'endpoint_id', 'attempts', 'status', 'next_attempt_at'],
      },
    },
  ] satisfies GlobalIndex[],
  streamView: 'NEW_AND_OLD_IMAGES',
} as const;

/**
 * The version of the items' layout (keys, attributes) this code writes and reads, kept on the
 * cloud table as the tag `data-model-version`: a release that changes the layout raises it, and
 * a release that migrates reads the tag to know what it starts from (docs/data-model.md).
 */
export const DATA_MODEL_VERSION = 3;
export const DATA_MODEL_VERSION_TAG = 'data-model-version';

function projectionOf(p: IndexProjection): Projection {
  return p.type === 'ALL'
    ? { ProjectionType: 'ALL' }
    : { ProjectionType: 'INCLUDE', NonKeyAttributes: [...p.attributes] };
}

export function createTableInput(tableName: string): CreateTableCommandInput {
  const keyAttributes = [
    TABLE.partitionKey,
    TABLE.sortKey,
    ...TABLE.globalIndexes.flatMap((gsi) => [gsi.partitionKey, gsi.sortKey]),
  ];
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: keyAttributes.map((name) => ({ AttributeName: name, AttributeType: 'S' })),
    KeySchema: [
      { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: TABLE.globalIndexes.map((gsi) => ({
      IndexName: gsi.name,
      KeySchema: [
        { AttributeName: gsi.partitionKey, KeyType: 'HASH' },
        { AttributeName: gsi.sortKey, KeyType: 'RANGE' },
      ],
      Projection: projectionOf(gsi.projection),
    })),
    StreamSpecification: { StreamEnabled: true, StreamViewType: TABLE.streamView },
  };
}
