import type { Page, PageRequest } from '../domain/pagination';
import type { PortalSessionRecord, PortalSessionStore } from '../domain/portal-sessions';
import { cancellationReasons, getRecord, stripKeys, type Dynamo } from './client';
import { keys, shopPk, skPrefix } from './keys';
import { queryPage } from './pagination';
import { TABLE } from './table';

/** An expired session answers "expired" (not "not valid") for a day, then TTL removes it. */
const KEEP_AFTER_EXPIRY_SECONDS = 24 * 3600;

/**
 * Two items per session, written together: one by the token's hash (the authorizer's
 * lookup, strongly consistent like a key's) and one in the shop's partition by id (DELETE's
 * and the list's). Both carry the whole record and a TTL a day past its expiry.
 */
export class DynamoPortalSessionStore implements PortalSessionStore {
  constructor(private readonly db: Dynamo) {}

  async create(record: PortalSessionRecord): Promise<void> {
    const ttl = { [TABLE.ttlAttribute]: Math.ceil(Date.parse(record.valid_until) / 1000) + KEEP_AFTER_EXPIRY_SECONDS };
    const item = (key: Record<string, string>) => ({ ...key, entity: 'portal_session', ...record, ...ttl });
    await this.db.doc.transactWrite({
      TransactItems: [keys.portalSession(record.token_hash), keys.portalSessionById(record.shop_id, record.id)].map(
        (key) => ({
          Put: { TableName: this.db.tableName, Item: item(key), ConditionExpression: 'attribute_not_exists(pk)' },
        }),
      ),
    });
  }

  getByHash(tokenHash: string): Promise<PortalSessionRecord | null> {
    return getRecord<PortalSessionRecord>(this.db, keys.portalSession(tokenHash));
  }

  get(shopId: string, id: string): Promise<PortalSessionRecord | null> {
    return getRecord<PortalSessionRecord>(this.db, keys.portalSessionById(shopId, id));
  }

  /**
   * The shop's items, newest first (ids are time-ordered), those expired left out by the
   * Query's filter; strongly consistent, so a session just made or deleted shows as such.
   */
  async list(shopId: string, page: PageRequest, now: string): Promise<Page<PortalSessionRecord>> {
    const result = await queryPage(
      this.db,
      {
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        FilterExpression: 'valid_until > :now',
        ExpressionAttributeValues: { ':pk': shopPk(shopId), ':prefix': skPrefix.portalSession, ':now': now },
        ScanIndexForward: false,
        ConsistentRead: true,
      },
      page,
    );
    return { items: result.items.map((i) => stripKeys<PortalSessionRecord>(i)), next: result.next };
  }

  /** Removes the shop's item and marks the token's revoked, in one transaction: the next request with it is refused. */
  async revoke(shopId: string, id: string, at: string): Promise<boolean> {
    const found = await this.get(shopId, id);
    if (!found) return false;
    try {
      await this.db.doc.transactWrite({
        TransactItems: [
          {
            Delete: {
              TableName: this.db.tableName,
              Key: keys.portalSessionById(shopId, id),
              ConditionExpression: 'attribute_exists(pk)',
            },
          },
          {
            Update: {
              TableName: this.db.tableName,
              Key: keys.portalSession(found.token_hash),
              UpdateExpression: 'SET revoked_at = :at',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeValues: { ':at': at },
            },
          },
        ],
      });
      return true;
    } catch (err) {
      // A concurrent DELETE took it first (or TTL removed it meanwhile): this one found nothing to delete.
      if (cancellationReasons(err)?.some((r) => r.Code === 'ConditionalCheckFailed')) return false;
      // A conflict or throttling: nothing was revoked, so the caller must hear it failed (and retry), not 404.
      throw err;
    }
  }
}
