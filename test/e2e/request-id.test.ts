import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { startTestStack } from '../helpers/stack';

/** Raw fetch: these answers come before (or instead of) any operation, so no OpenAPI operation describes all of them. */
async function raw(url: string, init: RequestInit = {}) {
  const res = await fetch(url, init);
  const json = JSON.parse(await res.text()) as { error?: { code: string; request_id: string } };
  return { status: res.status, requestId: res.headers.get('request-id'), json };
}

describe('Request-Id on answers made before an operation runs', () => {
  let stack: Awaited<ReturnType<typeof startTestStack>>;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(() => stack.stop());

  it('a body over the gateway limit: 413 with a Request-Id, repeated in the body', async () => {
    const reply = await raw(`${stack.url}/v1/shop`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat(11 * 1024 * 1024),
    });
    expect(reply.status).toBe(413);
    expect(reply.requestId).toMatch(/^req_[0-9a-z]{20,}$/i);
    expect(reply.json.error).toMatchObject({ code: 'body_too_large', request_id: reply.requestId });
  });

  it('an authorizer failure (the store is down): the contract 500 with a Request-Id, repeated in the body', async () => {
    await stack.deps.db.client.send(new DeleteTableCommand({ TableName: stack.tableName }));
    const reply = await raw(`${stack.url}/v1/me`, { headers: { authorization: `Bearer ${stack.demo.readKey.key}` } });
    expect(reply.status).toBe(500);
    expect(reply.requestId).toMatch(/^req_[0-9a-z]{20,}$/i);
    expect(reply.json.error).toMatchObject({ code: 'internal_error', request_id: reply.requestId });
    expect(JSON.stringify(reply.json)).not.toMatch(/ResourceNotFound|table/i);
  });
});
