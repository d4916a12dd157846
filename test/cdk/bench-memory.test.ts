import { Template } from 'aws-cdk-lib/assertions';
import { FUNCTION_MEMORY_MB, FUNCTION_SYSTEM_LOG_LEVEL, FUNCTION_TRACING } from '../../bench/lib/lambda-memory';
import { ShopCallsStack } from '../../lib/stack';
import { templateApp } from '../helpers/cdk-app';

// Synthesized once, outside any test's timeout (as in stack.test.ts): it takes seconds.
const app = templateApp();
const stack = new ShopCallsStack(app, 'Bench', { env: { account: '123456789012', region: 'us-east-1' } });
type FunctionProps = {
  MemorySize?: number;
  TracingConfig?: { Mode?: string };
  LoggingConfig?: { SystemLogLevel?: string };
};
const functions = Object.entries(Template.fromStack(stack).findResources('AWS::Lambda::Function')) as [
  string,
  { Properties: FunctionProps },
][];
const only = (name: string): FunctionProps => {
  const found = functions.filter(([id]) => id.startsWith(`Delivery${name}`));
  expect(found).toHaveLength(1);
  return (found[0] as [string, { Properties: FunctionProps }])[1].Properties;
};

describe('benchmark cost figures', () => {
  it.each(Object.entries(FUNCTION_MEMORY_MB))('price %s at the memory the stack gives it (%d MB)', (name, mb) => {
    expect(only(name).MemorySize).toBe(mb);
  });

  it.each(Object.entries(FUNCTION_TRACING))('count %s traces at its tracing mode (%s)', (name, mode) => {
    expect(only(name).TracingConfig?.Mode).toBe(mode);
  });

  it.each(Object.entries(FUNCTION_SYSTEM_LOG_LEVEL))(
    "count %s's own Lambda lines at its system log level (%s)",
    (name, level) => {
      expect(only(name).LoggingConfig?.SystemLogLevel).toBe(level);
    },
  );
});

describe('-c platformLogs=true', () => {
  it("brings Lambda's START/END/REPORT lines back on the delivery path (system log level INFO)", () => {
    const withLines = templateApp({ platformLogs: 'true' });
    const template = Template.fromStack(
      new ShopCallsStack(withLines, 'Lines', { env: { account: '123456789012', region: 'us-east-1' } }),
    );
    const levels = Object.entries(
      template.findResources('AWS::Lambda::Function') as Record<string, { Properties: FunctionProps }>,
    )
      .filter(([id]) => /^Delivery(Deliver|Fanout)/.test(id))
      .map(([, f]) => f.Properties.LoggingConfig?.SystemLogLevel);
    expect(levels).toEqual(['INFO', 'INFO']);
  });
});
