import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { ServiceTable } from './constructs/table';

/** Wires the constructs; each concern lives in its own construct under lib/constructs. */
export class ShopCallsStack extends Stack {
  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const { table } = new ServiceTable(this, 'Data');
    new CfnOutput(this, 'TableName', { value: table.tableName });
  }
}
