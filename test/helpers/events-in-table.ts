import type { EventRecord } from '../../shared/domain/events';
import type { ApiDeps as Deps } from '../../shared/wiring/api';
import { queryPrefix } from '../../shared/store/client';
import { eventFromItem } from '../../shared/store/events';
import { shopPk, skPrefix } from '../../shared/store/keys';

/** Every event item of a shop, read straight from the table (oldest first). */
export async function eventsOf(deps: Pick<Deps, 'db'>, shopId: string): Promise<EventRecord[]> {
  return (await queryPrefix(deps.db, shopPk(shopId), skPrefix.event)).map(eventFromItem);
}
