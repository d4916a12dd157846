import * as z from 'zod/mini';
import { BOOKING_MODES, WEEKDAYS, type Weekday } from './shop-values';

const TIME = /^([01]\d|2[0-3]):[0-5]\d$/;
// Only a closing time may be 24:00 (open until midnight).
const CLOSE_TIME = /^(([01]\d|2[0-3]):[0-5]\d|24:00)$/;
// IANA names: Area/Location[/Sub] or single names like UTC; letters, digits, _ + -.
const TZ_SHAPE = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/;

/**
 * The zone name to store, or null when the runtime's tz database does not know it.
 * ICU resolves IANA names to CLDR aliases (Asia/Kolkata → Asia/Calcutta), so the
 * client's spelling is kept; only its letter case is corrected when ICU agrees on the name.
 */
export function canonicalTimeZone(name: string): string | null {
  if (!TZ_SHAPE.test(name)) return null;
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    return resolved.toLowerCase() === name.toLowerCase() ? resolved : name;
  } catch {
    return null;
  }
}

export const timeZoneSchema = z.pipe(
  z.string(),
  z.transform((value: string, ctx) => {
    const canonical = canonicalTimeZone(value);
    if (!canonical) {
      ctx.issues.push({
        code: 'custom',
        message: `'${value}' is not an IANA time zone such as America/Chicago`,
        input: value,
      });
      return z.NEVER;
    }
    return canonical;
  }),
);

const interval = z.strictObject({
  open: z.string().check(z.regex(TIME, 'must be HH:MM (00:00 to 23:59)')),
  close: z.string().check(z.regex(CLOSE_TIME, 'must be HH:MM (00:01 to 24:00)')),
});

/** One day's opening intervals: each open < close, sorted, not overlapping. `[]` is closed. */
const dayHours = z.array(interval).check(
  z.maxLength(6, 'at most 6 intervals per day'),
  z.superRefine((intervals, ctx) => {
    intervals.forEach((iv, i) => {
      if (iv.open >= iv.close) {
        ctx.addIssue({
          code: 'custom',
          path: [i, 'close'],
          message: `close (${iv.close}) must be after open (${iv.open})`,
        });
      }
      const prev = intervals[i - 1];
      if (prev && iv.open < prev.close) {
        ctx.addIssue({ code: 'custom', path: [i, 'open'], message: 'intervals must be in order and must not overlap' });
      }
    });
  }),
);

export const hoursPatchSchema = z.strictObject(
  Object.fromEntries(WEEKDAYS.map((d) => [d, z.optional(dayHours)])) as Record<
    Weekday,
    z.ZodMiniOptional<typeof dayHours>
  >,
);
export type Hours = Record<Weekday, { open: string; close: string }[]>;

const text = (min: number, max: number) => z.string().check(z.trim(), z.minLength(min), z.maxLength(max));

/** updateShop's body: any subset of these fields; anything else is rejected. */
export const updateShopBody = z
  .partial(
    z.strictObject({
      name: text(1, 200),
      greeting: text(1, 1000),
      trade: text(1, 100),
      timezone: timeZoneSchema,
      booking_mode: z.enum(BOOKING_MODES),
      hours: hoursPatchSchema,
      emergency_triggers: z.array(text(1, 100)).check(z.maxLength(50)),
      paused: z.boolean(),
      pause_reason: z.nullable(text(1, 500)),
    }),
  )
  .check(
    z.superRefine((patch, ctx) => {
      if (patch.paused === false && typeof patch.pause_reason === 'string') {
        ctx.addIssue({
          code: 'custom',
          path: ['pause_reason'],
          message: 'a pause_reason cannot be set while unpausing',
        });
      }
    }),
  );
export type ShopPatch = z.output<typeof updateShopBody>;
