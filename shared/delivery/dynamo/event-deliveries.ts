import { fanOutDeliveryId } from '../fan-out';
import { type DeliveryRecord } from '../records';
import { batchGet, queryAll, queryPrefix, stripKeys, type Dynamo } from '../../store/client';
import { keys, shopPk, skPrefix } from '../../store/keys';

/** The marker's entity: not `delivery`, so no reader of deliveries and no stream filter takes it for one. */
export const MARKER = 'current_delivery';

/** An event's deliveries as one strongly consistent read finds them, and its markers by endpoint id. */
export interface EventDeliveryItems {
  rows: DeliveryRecord[];
  markers: Map<string, { delivery_id: string; delivery_ids: string[] }>;
}

/**
 * Every delivery of the event, to any endpoint (deleted ones included while their rows are kept),
 * in id order: GET /v1/events/{id}.
 */
export async function readEventDeliveries(db: Dynamo, shopId: string, eventId: string): Promise<DeliveryRecord[]> {
  return (await new DynamoEventDeliveryStore(db).read(shopId, eventId, 'all')).rows;
}

/**
 * The deliveries of an event, with no index: the rows sit under their endpoints, so they are
 * found by key. The fan-out's row to an endpoint has an id derived from event and endpoint;
 * every row a redeliver or recover made is named by the pair's marker (`delivery_ids`), and
 * the markers of an event share one prefix. `endpointIds`: the endpoints asked about; `all`:
 * the shop's endpoints, those deleted while their deliveries are kept, and any a marker names.
 */
export class DynamoEventDeliveryStore {
  constructor(private readonly db: Dynamo) {}

  async read(shopId: string, eventId: string, endpointIds: readonly string[] | 'all'): Promise<EventDeliveryItems> {
    const [prefixed, known] = await Promise.all([
      queryPrefix(this.db, shopPk(shopId), skPrefix.eventMarkers(eventId)),
      endpointIds === 'all' ? shopEndpointIds(this.db, shopId) : Promise.resolve(endpointIds),
    ]);
    const markers = markersOf(prefixed);
    const wanted = new Set(endpointIds === 'all' ? [...known, ...markers.keys()] : known);
    const [items] = await this.assemble(shopId, [{ eventId, markers, wanted }]);
    return items as EventDeliveryItems;
  }

  /**
   * The deliveries of several events to one endpoint, in two requests whatever their number:
   * one Query of the markers' range from the first event to the last (event ids sort by time),
   * filtered to the endpoint, and one batch of the rows it names with the fan-out's.
   */
  async readMany(
    shopId: string,
    eventIds: readonly string[],
    endpointId: string,
  ): Promise<Map<string, EventDeliveryItems>> {
    if (eventIds.length === 0) return new Map();
    const sorted = [...eventIds].sort();
    const inRange = await queryAll(this.db, {
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      FilterExpression: 'endpoint_id = :endpoint',
      ExpressionAttributeValues: {
        ':pk': shopPk(shopId),
        ':from': skPrefix.eventMarkers(sorted[0] as string),
        ':to': `${skPrefix.eventMarkers(sorted[sorted.length - 1] as string)}~`,
        ':endpoint': endpointId,
      },
    });
    const wanted = new Set([endpointId]);
    const events = sorted.map((eventId) => {
      return { eventId, markers: markersOf(inRange.filter((i) => i.event_id === eventId)), wanted };
    });
    const items = await this.assemble(shopId, events);
    return new Map(sorted.map((eventId, i) => [eventId, items[i] as EventDeliveryItems]));
  }

  /**
   * Each event's rows read by key in one batch: the fan-out's row to each wanted endpoint and every
   * row its marker names.
   */
  private async assemble(
    shopId: string,
    events: { eventId: string; markers: Markers; wanted: Set<string> }[],
  ): Promise<EventDeliveryItems[]> {
    const refsOf = events.map(({ eventId, markers, wanted }) =>
      [...wanted].flatMap((endpointId) => {
        const ids = new Set([fanOutDeliveryId(eventId, endpointId), ...(markers.get(endpointId)?.delivery_ids ?? [])]);
        return [...ids].map((id) => keys.delivery(shopId, endpointId, id));
      }),
    );
    const all = refsOf.flat();
    const found = all.length > 0 ? await batchGet(this.db, all) : new Map<string, Record<string, unknown>>();
    return events.map(({ markers, wanted }, i) => {
      const rows = (refsOf[i] ?? []).flatMap((r) => {
        const item = found.get(`${r.pk}|${r.sk}`);
        return item ? [stripKeys<DeliveryRecord>(item)] : [];
      });
      return {
        rows: byId(rows),
        markers: new Map([...markers].filter(([endpointId]) => wanted.has(endpointId))),
      };
    });
  }
}

type Markers = Map<string, { delivery_id: string; delivery_ids: string[] }>;

/** The markers among an event's prefixed items, by endpoint id, each listing every row it has named. */
function markersOf(prefixed: Record<string, unknown>[]): Markers {
  return new Map(
    prefixed
      .filter((i) => i.entity === MARKER)
      .map((i) => {
        const current = String(i.delivery_id);
        const made = Array.isArray(i.delivery_ids) ? i.delivery_ids.map(String) : [];
        return [
          String(i.endpoint_id),
          { delivery_id: current, delivery_ids: made.includes(current) ? made : [...made, current] },
        ] as const;
      }),
  );
}

const byId = (rows: DeliveryRecord[]) => rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

/** The ids of the shop's endpoints, and of those deleted whose deliveries are still kept. */
async function shopEndpointIds(db: Dynamo, shopId: string): Promise<string[]> {
  const [live, deleted] = await Promise.all([
    queryPrefix(db, shopPk(shopId), skPrefix.webhookEndpoint, { attributes: ['id'] }),
    queryPrefix(db, shopPk(shopId), skPrefix.deletedEndpoint, { attributes: ['endpoint_id'] }),
  ]);
  // The configurations' ids (their state items, under the same prefix, have none).
  return [
    ...live.filter((i) => i.id !== undefined).map((i) => String(i.id)),
    ...deleted.map((i) => String(i.endpoint_id)),
  ];
}
