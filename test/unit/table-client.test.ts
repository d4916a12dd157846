import { dynamo, SDK_LOGGER } from '../../shared/store/client';

describe('the table client', () => {
  const db = dynamo({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9', tableName: 't' });
  afterAll(() => db.client.destroy());

  it('runs no SDK logging middleware, for the plain client or the document client', () => {
    const names = (stack: { identify(): string[] }) => stack.identify().map((n) => n.split(' ')[0]);
    // The SDK adds it by default: a fresh stack of the same client class has it.
    expect(names(new (db.client.constructor as new (c: object) => typeof db.client)({ region: 'us-east-1' }).middlewareStack)).toContain(SDK_LOGGER);
    expect(names(db.client.middlewareStack)).not.toContain(SDK_LOGGER);
    expect(names(db.doc.middlewareStack)).not.toContain(SDK_LOGGER);
  });
});
