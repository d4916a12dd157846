/**
 * The shop's fixed vocabularies, apart from the request schemas (./shop-schema.ts), so the
 * domain can use them without a bundle building the update operation's schemas at init.
 */
export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];
export const BOOKING_MODES = ['auto_book', 'approval_required', 'message_only'] as const;
