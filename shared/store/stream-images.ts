import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DeliveryRecord } from '../delivery/records';
import type { EventRecord } from '../domain/events';
import type { RecoveryRecord } from '../delivery/recovery-job';
import type { RateRaise } from '../delivery/rate-raise';
import { stripKeys } from './client';
import { eventFromItem } from './events';

/** What a stream record's new image holds, as the domain knows it. */
export type StreamedRecord =
  | { entity: 'event'; event: EventRecord }
  | { entity: 'delivery'; delivery: DeliveryRecord }
  | { entity: 'recovery'; recovery: RecoveryRecord }
  | { entity: 'rate_raise'; raise: RateRaise };

/**
 * Decodes a table stream image (marshalled attribute values, as Lambda and DynamoDB Streams
 * hand it over) into the record it stores: only the store knows the item layout. Null for
 * any other item, and for a record without a new image.
 */
export function recordOfStreamImage(image: Record<string, unknown> | undefined): StreamedRecord | null {
  if (!image) return null;
  const item = unmarshall(image as Record<string, AttributeValue>);
  if (item.entity === 'event') return { entity: 'event', event: eventFromItem(item) };
  if (item.entity === 'delivery') return { entity: 'delivery', delivery: stripKeys<DeliveryRecord>(item) };
  if (item.entity === 'recovery') return { entity: 'recovery', recovery: stripKeys<RecoveryRecord>(item) };
  if (item.entity === 'rate_raise') return { entity: 'rate_raise', raise: stripKeys<RateRaise>(item) };
  return null;
}
