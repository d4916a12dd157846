/**
 * Every time the page shows, in one format: the reader's locale and time zone, with the date,
 * the seconds and the zone's name ("Nov 28, 2026, 2:04:05 PM GMT+1"), so a time read on one
 * view compares with a time read on another, and a screenshot sent to support says which zone.
 */
const FORMAT = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
  second: '2-digit',
  timeZoneName: 'short',
});

export function formatTime(iso) {
  if (!iso) return 'an unknown time';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : FORMAT.format(d);
}

/** The reader's time zone, for inputs that take a local time (datetime-local has no zone of its own). */
export const timeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;
