import { createHash } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/** External id prefixes (docs/api.md, Conventions). */
export type IdPrefix = 'shop' | 'call' | 'job' | 'evt' | 'we' | 'dlv' | 'rcv' | 'key' | 'ps' | 'req';

// Pure: a bundle that never makes an id leaves ulid out.
const nextUlid = /* @__PURE__ */ monotonicFactory();
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

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * A ULID-shaped id derived from a seed: the same inputs always give the same id. Used for
 * delivery rows made by the fan-out, so a retried stream batch rewrites nothing new.
 */
export function derivedId(prefix: IdPrefix, timeMs: number, seed: string): string {
  const time = encodeTime(timeMs);
  const digest = createHash('sha256').update(seed).digest();
  let random = '';
  for (let i = 0; i < 16; i++) random += CROCKFORD[(digest[i] as number) % 32];
  return `${prefix}_${time}${random}`;
}

/** The creation time encoded in a prefixed ULID. */
export function idTime(id: string): number {
  const body = id.slice(id.indexOf('_') + 1, id.indexOf('_') + 11);
  return [...body].reduce((acc, ch) => acc * 32 + CROCKFORD.indexOf(ch), 0);
}

/** The smallest or largest id of a prefix made at `timeMs`: bounds of a key range by time. */
export function idBound(prefix: IdPrefix, timeMs: number, end: 'first' | 'last'): string {
  return `${prefix}_${encodeTime(timeMs)}${(end === 'first' ? '0' : 'z').repeat(16)}`;
}

function encodeTime(timeMs: number): string {
  let time = '';
  for (let t = timeMs, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = CROCKFORD[t % 32] + time;
  return time;
}
