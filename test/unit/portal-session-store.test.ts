import { DynamoPortalSessionStore } from '../../shared/store/portal-sessions';

/** A table that holds one session and refuses the revoking transaction for `code`. */
function refusing(code: string) {
  const cancelled = Object.assign(new Error('Transaction cancelled'), {
    name: 'TransactionCanceledException',
    CancellationReasons: [{ Code: code }, { Code: 'None' }],
  });
  const doc = {
    get: async () => ({ Item: { pk: 'p', sk: 's', id: 'ps_1', shop_id: 'shop_1', token_hash: 'h', revoked_at: null } }),
    transactWrite: async () => {
      throw cancelled;
    },
  };
  return new DynamoPortalSessionStore({ doc, client: {}, tableName: 't' } as never);
}

describe('revoking a portal session (shared/store/portal-sessions.ts)', () => {
  it('answers false (404) only when the session was gone: a failed condition', async () => {
    await expect(refusing('ConditionalCheckFailed').revoke('shop_1', 'ps_1', '2026-11-25T00:00:00.000Z')).resolves.toBe(
      false,
    );
  });

  it('throws on a conflict or throttling, which revoked nothing: never a 404 for a session that still works', async () => {
    await expect(refusing('TransactionConflict').revoke('shop_1', 'ps_1', '2026-11-25T00:00:00.000Z')).rejects.toThrow(
      'Transaction cancelled',
    );
    await expect(refusing('ThrottlingError').revoke('shop_1', 'ps_1', '2026-11-25T00:00:00.000Z')).rejects.toThrow(
      'Transaction cancelled',
    );
  });
});
