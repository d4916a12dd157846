import { monotonicFactory } from 'ulid';

/** External id prefixes (API-CONTRACT.md, Wire conventions). */
export type IdPrefix = 'shop' | 'call' | 'job' | 'evt' | 'we' | 'dlv' | 'key' | 'req';

const nextUlid = monotonicFactory();
// Crockford base32 in lower case: no i, l, o, u.
const ULID_BODY = '[0-9a-hjkmnp-tv-z]{26}';

/** A prefixed, time-sortable id: `job_01jd3x...` (26 lower-case ULID characters). */
export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  return `${prefix}_${nextUlid(now).toLowerCase()}`;
}

/** True when `value` is a well-formed id of that prefix; anything else is a 404, never a lookup. */
export function isId(prefix: IdPrefix, value: string): boolean {
  return new RegExp(`^${prefix}_${ULID_BODY}$`).test(value);
}
