import type { ServerResponse } from 'node:http';
import { logger } from '../../shared/logger';
import { call } from '../helpers/http';
import { closeReceivers, startReceiver, waitFor } from '../helpers/receiver';
import { startTestStack } from '../helpers/stack';

type Line = Record<string, unknown>;

/** Something one side waits for and the other opens. */
function gate() {
  let open = () => undefined as void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/**
 * The local stack runs the API and the pipeline in one process, so their invocations
 * interleave. Each log line must still carry the context of the invocation that wrote it:
 * a consumer's failed attempt was once logged with the function_name of the last API request.
 */
describe('log lines in the local stack carry their own invocation', () => {
  let stack: Awaited<ReturnType<typeof startTestStack>>;
  const lines: Line[] = [];
  beforeAll(async () => {
    stack = await startTestStack();
  });
  beforeEach(() => {
    logger.setWriter((line) => lines.push(JSON.parse(line) as Line));
    logger.setLogLevel('WARN');
  });
  afterEach(async () => {
    logger.setLogLevel('SILENT');
    logger.setWriter(undefined);
    jest.restoreAllMocks();
    await closeReceivers();
  });
  afterAll(() => stack.stop());

  it("a failed delivery attempt's line carries the consumer's function, an API request's line the API's, though the API request started while the attempt was under way", async () => {
    const key = stack.demo.writeKey.key;
    let secret = '';
    const attemptArrived = gate();
    let held: ServerResponse | undefined;
    const receiver = await startReceiver(
      () => [secret],
      (n, res) => {
        if (n > 1) return void res.writeHead(500).end();
        held = res;
        attemptArrived.open();
      },
    );
    const created = await call(stack.url, 'POST', '/v1/webhook-endpoints', {
      key,
      body: { url: receiver.url, events: ['*'] },
    });
    expect(created.status).toBe(201);
    secret = created.json.secret as string;
    const endpointId = created.json.id as string;
    expect((await call(stack.url, 'POST', `/v1/webhook-endpoints/${endpointId}/test`, { key })).status).toBe(202);

    // The consumer's invocation is under way (its context set), its request held by the receiver.
    await attemptArrived.opened;
    // An API request starts now, sets its context, and is held inside its operation until the consumer has logged.
    const apiEntered = gate();
    const apiMayFail = gate();
    const shops = stack.deps.shops;
    jest.spyOn(shops, 'get').mockImplementationOnce(async () => {
      apiEntered.open();
      await apiMayFail.opened;
      throw new Error('table unavailable');
    });
    const apiReply = call(stack.url, 'GET', '/v1/shop', { key });
    await apiEntered.opened;

    held?.writeHead(500).end();
    const consumerLine = await waitFor(
      () => lines.find((l) => l.message === 'Webhook delivery attempt failed'),
      10_000,
      "the consumer's line",
    );
    apiMayFail.open();
    const reply = await apiReply;
    expect(reply.status).toBe(500);
    const apiLine = await waitFor(() => lines.find((l) => l.message === 'Unhandled error'), 10_000, "the API's line");

    expect(consumerLine).toMatchObject({
      level: 'WARN',
      function_name: 'deliver',
      endpoint_id: endpointId,
      response_status: 500,
    });
    expect(apiLine).toMatchObject({
      level: 'ERROR',
      function_name: 'getShop',
      request_id: reply.headers.get('request-id'),
    });
    expect(consumerLine.function_request_id).toEqual(expect.any(String));
    expect(consumerLine.function_request_id).not.toBe(apiLine.function_request_id);
  });
});
