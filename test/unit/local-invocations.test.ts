import type { Context } from 'aws-lambda';
import { invoke, localFunction } from '../../lib/local/invocations';
import { lambdaContext } from '../../lib/local/lambda-events';
import { logger, withLambdaContext } from '../../shared/logger';

/** Lambda entries run by the local stack in one process: each invocation's lines carry its own context, however they interleave. */
describe('local invocations (lib/local/invocations.ts)', () => {
  const lines: Record<string, unknown>[] = [];
  beforeEach(() => {
    lines.length = 0;
    logger.setWriter((line) => lines.push(JSON.parse(line) as Record<string, unknown>));
    logger.setLogLevel('DEBUG');
  });
  afterEach(() => {
    logger.setWriter(undefined);
    logger.setLogLevel('SILENT');
  });

  /** A step at a time, in the order the test says, whichever invocation takes it. */
  const gate = () => {
    let open = () => undefined as void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return { open, opened };
  };

  it('keeps each overlapping invocation in its own context: the later addContext does not reach the earlier one, nor the other way round', async () => {
    const apiMayLog = gate();
    const consumerMayLog = gate();
    const consumerStarted = gate();
    const api = withLambdaContext(async () => {
      await apiMayLog.opened;
      logger.info('api line');
    });
    const consumer = withLambdaContext(async () => {
      consumerStarted.open();
      await consumerMayLog.opened;
      logger.warn('consumer line');
    });
    const deliver = localFunction('deliver', consumer);
    // The API starts first, the consumer sets its context after it, the API logs, then the consumer.
    // The API starts first and the consumer sets its context after it; the API logs; a second API
    // invocation sets its context and logs before the consumer does.
    const apiDone = invoke(api, {}, lambdaContext('createWebhookEndpoint', 'api-request-1'));
    const consumerDone = deliver({});
    await consumerStarted.opened;
    apiMayLog.open();
    await apiDone;
    logger.info('outside any invocation');
    await invoke(api, {}, lambdaContext('getWebhookEndpoint', 'api-request-2'));
    consumerMayLog.open();
    await consumerDone;

    expect(lines.map((l) => [l.message, l.function_name, l.function_request_id])).toEqual([
      ['api line', 'createWebhookEndpoint', 'api-request-1'],
      ['outside any invocation', undefined, undefined],
      ['api line', 'getWebhookEndpoint', 'api-request-2'],
      ['consumer line', 'deliver', expect.stringMatching(/^[0-9a-f-]{36}$/)],
    ]);
  });

  it('gives each call of a local function a context of its own: its name, a fresh request id', async () => {
    const seen: Context[] = [];
    const sweep = localFunction('sweep', async (_event: unknown, context: Context) => void seen.push(context));
    await sweep({});
    await sweep({});
    expect(seen.map((c) => c.functionName)).toEqual(['sweep', 'sweep']);
    expect(seen[0]?.awsRequestId).not.toBe(seen[1]?.awsRequestId);
    expect(seen[0]?.invokedFunctionArn).toMatch(/:function:sweep$/);
  });
});
