import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors';

/**
 * Opaque list cursors: the store position, bound to the shop and the list (with its
 * filter) that issued it, signed with HMAC-SHA256. A forged, truncated or foreign cursor
 * is a 400 invalid_cursor, never a store error and never another shop's data.
 */
export interface CursorScope {
  shopId: string;
  /** The list and its filter, e.g. `jobs?status=pending`. */
  list: string;
}

const sign = (payload: string, secret: Buffer): Buffer => createHmac('sha256', secret).update(payload).digest();

export function encodeCursor(scope: CursorScope, position: Record<string, unknown>, secret: Buffer): string {
  const payload = Buffer.from(JSON.stringify({ s: scope.shopId, l: scope.list, p: position })).toString('base64url');
  return `${payload}.${sign(payload, secret).toString('base64url')}`;
}

export function decodeCursor(cursor: string, scope: CursorScope, secret: Buffer): Record<string, unknown> {
  const invalid = new AppError(
    'invalid_cursor',
    'cursor is not a value returned by this list; start again without it.',
    {
      param: 'cursor',
    },
  );
  const [payload, signature, extra] = cursor.split('.');
  if (!payload || !signature || extra !== undefined) throw invalid;
  // Compared as text: base64url decoding ignores the spare bits of the last character, so a
  // byte comparison would accept a few altered spellings of a valid signature.
  const expected = Buffer.from(sign(payload, secret).toString('base64url'));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid;
  let decoded: { s?: unknown; l?: unknown; p?: unknown };
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as typeof decoded;
  } catch {
    throw invalid;
  }
  if (decoded.s !== scope.shopId || decoded.l !== scope.list || typeof decoded.p !== 'object' || decoded.p === null)
    throw invalid;
  return decoded.p as Record<string, unknown>;
}
