import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { createTableInput } from '../../shared/store/table';
import type { ApiDeps } from '../../shared/wiring/api';
import { useFreshTable } from '../helpers/table';

const describeTable = async (deps: ApiDeps) =>
  (await deps.db.client.send(new DescribeTableCommand({ TableName: deps.db.tableName }))).Table;

describe("the tests' fresh tables (test/helpers/table.ts)", () => {
  it("are the service's table, without its stream unless one is asked for", async () => {
    const plain = await describeTable(await useFreshTable());
    const streamed = await describeTable(await useFreshTable({ stream: true }));
    expect(plain?.StreamSpecification).toBeUndefined();
    expect(streamed?.StreamSpecification).toEqual(createTableInput('x').StreamSpecification);
    const shape = (t: typeof plain) => [t?.KeySchema, t?.GlobalSecondaryIndexes?.map((i) => i.IndexName).sort()];
    expect(shape(plain)).toEqual(shape(streamed));
    expect(shape(plain)[0]).toEqual(createTableInput('x').KeySchema);
  });
});
