import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { FUNCTION_MEMORY_MB } from '../../bench/lib/lambda-memory';
import { ShopCallsStack } from '../../lib/stack';

// Synthesized once, outside any test's timeout (as in stack.test.ts): it takes seconds.
const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const stack = new ShopCallsStack(app, 'Bench', { env: { account: '123456789012', region: 'us-east-1' } });
const functions = Object.entries(Template.fromStack(stack).findResources('AWS::Lambda::Function')) as [string, { Properties: { MemorySize?: number } }][];

describe('benchmark cost figures', () => {
  it.each(Object.entries(FUNCTION_MEMORY_MB))('price %s at the memory the stack gives it (%d MB)', (name, mb) => {
    const found = functions.filter(([id]) => id.startsWith(`Delivery${name}`));
    expect(found).toHaveLength(1);
    expect(found[0]?.[1].Properties.MemorySize).toBe(mb);
  });
});
