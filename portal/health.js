import { formatTime } from './time.js';

/**
 * An endpoint's health in words a person uses ("Failing since 14:02, retrying; next try at
 * 14:57"), from the fields the API gives (circuit, failures, times). Pure: `at` formats a time.
 */
export function healthOf(e, at = formatTime) {
  if (!e.enabled) {
    if (e.disabled_reason === 'failing')
      return {
        tone: 'bad',
        text: `Turned off automatically: it kept failing for 3 days${e.failing_since ? ` (since ${at(e.failing_since)})` : ''}. Fix the receiver, then turn it back on.`,
      };
    if (e.disabled_reason === 'gone')
      return { tone: 'bad', text: 'Turned off: the receiver answered "410 Gone", which asks us to stop sending.' };
    return { tone: 'muted', text: 'Turned off. Nothing is sent to it until it is turned back on.' };
  }
  const h = e.health;
  const since = e.failing_since ?? h.last_failure_at;
  if (h.circuit === 'half_open') return { tone: 'bad', text: `Failing since ${at(since)}; trying again now.` };
  if (h.circuit === 'open')
    return {
      tone: 'bad',
      text: `Failing since ${at(since)}, retrying${h.next_probe_at ? `; next try at ${at(h.next_probe_at)}` : ''}.`,
    };
  if (h.consecutive_failures > 0)
    return { tone: 'bad', text: `The last delivery failed at ${at(h.last_failure_at)}; retrying.` };
  if (h.last_success_at) return { tone: 'ok', text: `Working. Last delivered at ${at(h.last_success_at)}.` };
  return { tone: 'muted', text: 'Ready. Nothing has been sent to it yet.' };
}
