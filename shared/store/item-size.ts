import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { cancellationReasons } from './client';

/**
 * The most an item written by this service may hold: DynamoDB's 400 KB (409,600 bytes) less a
 * margin, since DynamoDB's own count of a number is only documented approximately.
 */
export const MAX_ITEM_BYTES = 390 * 1024;

/**
 * An item's size as DynamoDB counts it against its 400 KB limit (and bills it): each attribute's
 * name and value in UTF-8 bytes; a number one byte per two significant digits plus one; null and
 * booleans one byte; a map or list 3 bytes plus one per element, a map's keys counted as names.
 * Measured on the item marshalled as the document client marshals it, so it is what is stored.
 */
export function itemBytes(item: Record<string, unknown>): number {
  const marshalled = marshall(item, { removeUndefinedValues: true, convertClassInstanceToMap: false });
  return Object.entries(marshalled).reduce((n, [name, value]) => n + utf8(name) + valueBytes(value), 0);
}

const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');

function numberBytes(text: string): number {
  const digits = text.replace(/^-/, '').replace(/e.*$/i, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
}

function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return utf8(value.S);
  if (value.N !== undefined) return numberBytes(value.N);
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((n, s) => n + utf8(s), 0);
  if (value.NS !== undefined) return value.NS.reduce((n, s) => n + numberBytes(s), 0);
  if (value.BS !== undefined) return value.BS.reduce((n, b) => n + b.byteLength, 0);
  if (value.L !== undefined) return value.L.reduce((n, v) => n + 1 + valueBytes(v), 3);
  if (value.M !== undefined)
    return Object.entries(value.M).reduce((n, [name, v]) => n + 1 + utf8(name) + valueBytes(v), 3);
  return 0;
}

const ITEM_SIZE_EXCEEDED = /item size (to update )?has exceeded the maximum allowed size/i;

/**
 * DynamoDB's refusal of an item over 400 KB: a ValidationException on a single write, a
 * ValidationError among a transaction's cancellation reasons (DynamoDB Local answers a
 * transaction with the former). The same write fails the same way however often it is tried.
 */
export function isItemTooLarge(err: unknown): boolean {
  if (err instanceof Error && err.name === 'ValidationException') return ITEM_SIZE_EXCEEDED.test(err.message);
  const reasons = cancellationReasons(err) ?? [];
  return reasons.some((r) => r.Code === 'ValidationError' && ITEM_SIZE_EXCEEDED.test(r.Message ?? ''));
}
