import type { AppError } from '../../shared/errors';
import { canonicalTimeZone, updateShopBody } from '../../shared/domain/shop-schema';
import { toChanges } from '../../shared/domain/shop';
import { parseOrThrow } from '../../shared/http/validation';

function errorOf(body: unknown): AppError {
  try {
    parseOrThrow(updateShopBody, body);
  } catch (err) {
    return err as AppError;
  }
  throw new Error(`expected ${JSON.stringify(body)} to be rejected`);
}

describe('PATCH /v1/shop body', () => {
  it.each([
    [{ greeting: '' }, 'parameter_invalid', 'greeting'],
    [{ greeting: 'x'.repeat(1001) }, 'parameter_invalid', 'greeting'],
    [{ greeting: 42 }, 'parameter_invalid', 'greeting'],
    [{ greting: 'typo' }, 'parameter_unknown', 'greting'],
    [{ owner_email: 'a@b.c' }, 'parameter_unknown', 'owner_email'],
    [{ timezone: 'Mars/Olympus_Mons' }, 'parameter_invalid', 'timezone'],
    [{ timezone: '+05:00' }, 'parameter_invalid', 'timezone'],
    [{ booking_mode: 'whenever' }, 'parameter_invalid', 'booking_mode'],
    [{ hours: { mon: [{ open: '17:00', close: '08:00' }] } }, 'parameter_invalid', 'hours.mon.0.close'],
    [{ hours: { mon: [{ open: '09:00', close: '09:00' }] } }, 'parameter_invalid', 'hours.mon.0.close'],
    [{ hours: { mon: [{ open: '25:00', close: '26:00' }] } }, 'parameter_invalid', 'hours.mon.0.open'],
    [
      {
        hours: {
          mon: [
            { open: '08:00', close: '12:00' },
            { open: '11:00', close: '13:00' },
          ],
        },
      },
      'parameter_invalid',
      'hours.mon.1.open',
    ],
    [{ hours: { monday: [] } }, 'parameter_unknown', 'hours.monday'],
    [{ hours: { mon: [{ open: '08:00', close: '12:00', note: 'x' }] } }, 'parameter_unknown', 'hours.mon.0.note'],
    [{ hours: { mon: [{ open: '08:00' }] } }, 'parameter_missing', 'hours.mon.0.close'],
    [{ emergency_triggers: Array.from({ length: 51 }, (_, i) => `t${i}`) }, 'parameter_invalid', 'emergency_triggers'],
    [{ emergency_triggers: ['ok', ''] }, 'parameter_invalid', 'emergency_triggers.1'],
    [{ emergency_triggers: ['x'.repeat(101)] }, 'parameter_invalid', 'emergency_triggers.0'],
    [{ paused: 'yes' }, 'parameter_invalid', 'paused'],
    [{ paused: false, pause_reason: 'holiday' }, 'parameter_invalid', 'pause_reason'],
  ])('%j → %s at %s', (body, code, param) => {
    const err = errorOf(body);
    expect(err.code).toBe(code);
    expect(err.options.param).toBe(param);
    expect(err.message).toContain(param);
  });

  it('accepts a full valid patch and canonicalizes the time zone', () => {
    const patch = parseOrThrow(updateShopBody, {
      name: ' Ace Plumbing ',
      greeting: 'Hello!',
      trade: 'plumbing',
      timezone: 'america/chicago',
      booking_mode: 'auto_book',
      hours: {
        sat: [
          { open: '09:00', close: '12:00' },
          { open: '13:00', close: '24:00' },
        ],
        sun: [],
      },
      emergency_triggers: ['burst pipe'],
      paused: true,
      pause_reason: 'Holiday',
    });
    expect(patch.timezone).toBe('America/Chicago');
    expect(patch.name).toBe('Ace Plumbing');
    expect(patch.hours?.sun).toEqual([]);
  });

  it('unpausing clears the pause reason', () => {
    expect(toChanges({ paused: false }).fields).toEqual({ paused: false, pause_reason: null });
    expect(toChanges({ paused: true, pause_reason: 'x' }).fields).toEqual({ paused: true, pause_reason: 'x' });
  });
});

describe('canonicalTimeZone', () => {
  it.each([
    ['Europe/London', 'Europe/London'],
    ['UTC', 'UTC'],
    ['America/Argentina/Buenos_Aires', 'America/Argentina/Buenos_Aires'],
    ['Etc/GMT+5', 'Etc/GMT+5'],
    ['Asia/Kolkata', 'Asia/Kolkata'],
    ['america/new_york', 'America/New_York'],
  ])('%s is %s', (input, canonical) => expect(canonicalTimeZone(input)).toBe(canonical));

  it.each(['', 'Nowhere/City', '../etc/passwd', 'Europe/London ', 'GMT+25:00'])('%j is not a zone', (input) =>
    expect(canonicalTimeZone(input)).toBeNull(),
  );
});
