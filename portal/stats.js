import { api } from './api.js';
import { h, svg, uid } from './dom.js';
import { formatTime, timeZone } from './time.js';
import { endpointsView } from './endpoints.js';

const back = (ctx) => h('button', { type: 'button', onclick: () => ctx.go(endpointsView) }, 'Back to endpoints');
const pct = (rate) => (rate === null ? '—' : `${(rate * 100).toFixed(1)} %`);
const ms = (v) => (v === null ? '—' : `${v} ms`);

/** Label/value lines; `data-stat` names the API field each value comes from. */
const facts = (rows) =>
  h(
    'dl',
    { class: 'facts' },
    rows.map(([field, label, value]) => h('div', {}, h('dt', {}, label), h('dd', { 'data-stat': field }, value))),
  );

/**
 * The last 24 hours of one endpoint, in two groups a reader must not mix up: attempts (each
 * request sent to the receiver: a message may take several) and deliveries (the messages
 * themselves, each tried until it succeeds or runs out of attempts).
 */
export async function statsView(ctx, endpoint) {
  const s = await api('GET', `/v1/webhook-endpoints/${endpoint.id}/stats`);
  const attemptsId = uid('attempts');
  const deliveriesId = uid('deliveries');
  return h(
    'div',
    {},
    h('div', { class: 'bar' }, h('h2', { tabindex: '-1' }, `Stats, last ${s.window_hours} hours`), back(ctx)),
    h('p', { class: 'url' }, endpoint.url),
    h(
      'section',
      { 'aria-labelledby': attemptsId },
      h('h3', { id: attemptsId }, `Attempts, last ${s.window_hours} hours`),
      h(
        'p',
        { class: 'note' },
        'An attempt is one request sent to the receiver. A message that fails is tried again, so one message can take several attempts.',
      ),
      facts([
        ['attempts', 'Attempts sent', String(s.attempts)],
        ['succeeded', 'Attempts that succeeded', String(s.succeeded)],
        ['failed', 'Attempts that failed', String(s.failed)],
        ['success_rate', 'Success rate of attempts', pct(s.success_rate)],
        ['latency_ms.p50', 'Typical answer time (half are faster)', ms(s.latency_ms.p50)],
        ['latency_ms.p95', 'Slow answer time (95 in 100 are faster)', ms(s.latency_ms.p95)],
      ]),
      chart(s),
    ),
    h(
      'section',
      { 'aria-labelledby': deliveriesId },
      h('h3', { id: deliveriesId }, 'Deliveries (messages)'),
      h(
        'p',
        { class: 'note' },
        'A delivery is one message to this endpoint, with all its attempts. Waiting and retrying are counted as they stand now.',
      ),
      facts([
        ['deliveries.pending', 'Messages waiting for their first attempt', String(s.deliveries.pending)],
        ['deliveries.retrying', 'Messages waiting to be tried again', String(s.deliveries.retrying)],
        [
          'deliveries.failed',
          `Messages given up on (every attempt failed), last ${s.window_hours} hours`,
          String(s.deliveries.failed),
        ],
      ]),
    ),
  );
}

/** Two bars each for attempts' outcomes and answer times, drawn with DOM calls; the numbers are in the list above too. */
function chart(s) {
  const rows = [
    { label: 'Succeeded', value: s.succeeded, max: Math.max(s.attempts, 1), text: String(s.succeeded), cls: 'ok' },
    { label: 'Failed', value: s.failed, max: Math.max(s.attempts, 1), text: String(s.failed), cls: 'bad' },
    {
      label: 'p50',
      value: s.latency_ms.p50 ?? 0,
      max: Math.max(s.latency_ms.p95 ?? 0, 1),
      text: ms(s.latency_ms.p50),
      cls: 'lat',
    },
    {
      label: 'p95',
      value: s.latency_ms.p95 ?? 0,
      max: Math.max(s.latency_ms.p95 ?? 0, 1),
      text: ms(s.latency_ms.p95),
      cls: 'lat',
    },
  ];
  const width = 320;
  const bar = 180;
  const titleId = uid('chart');
  return svg(
    'svg',
    { viewBox: `0 0 ${width} ${rows.length * 28 + 8}`, class: 'chart', role: 'img', 'aria-labelledby': titleId },
    svg(
      'title',
      { id: titleId },
      `Attempts: succeeded ${s.succeeded}, failed ${s.failed}; answer time p50 ${ms(s.latency_ms.p50)}, p95 ${ms(s.latency_ms.p95)}`,
    ),
    rows.map((r, i) => {
      const y = 8 + i * 28;
      const w = Math.round((r.value / r.max) * bar);
      return svg(
        'g',
        {},
        svg('text', { x: 0, y: y + 14 }, r.label),
        svg('rect', { x: 72, y, width: Math.max(w, 1), height: 18, class: r.cls }),
        svg('text', { x: 72 + Math.max(w, 1) + 6, y: y + 14 }, r.text),
      );
    }),
  );
}

function recoveryText(r) {
  const queued = `${r.deliveries_queued} message${r.deliveries_queued === 1 ? '' : 's'} to send again`;
  const span = `events from ${formatTime(r.since)} to ${formatTime(r.until)}`;
  if (r.status === 'running')
    return `${queued} so far, for ${span}; checked up to ${formatTime(r.checked_through)}, still going…`;
  if (r.status === 'cancelled')
    return `Stopped: the endpoint was turned off or deleted. ${queued} for ${span} before that.`;
  return `${queued} for ${span}.`;
}

/** Sends again every event since a date that this endpoint receives (at most 30 days back). */
export function recoverView(ctx, endpoint) {
  const sinceId = uid('since');
  const untilId = uid('until');
  const result = h('p', { class: 'note' });
  const since = h('input', { id: sinceId, type: 'datetime-local', required: true, step: 1 });
  const until = h('input', { id: untilId, type: 'datetime-local', step: 1 });
  const form = h(
    'form',
    {
      class: 'stack',
      onsubmit: (e) => {
        e.preventDefault();
        void ctx.act(async () => {
          // datetime-local is the reader's local time; the API takes UTC instants.
          const body = {
            since: new Date(since.value).toISOString(),
            ...(until.value ? { until: new Date(until.value).toISOString() } : {}),
          };
          let r = await api('POST', `/v1/webhook-endpoints/${endpoint.id}/recover`, body, { idempotent: true });
          // A large window goes on in the background: follow it while this view is shown.
          for (;;) {
            result.textContent = recoveryText(r);
            ctx.status(result.textContent);
            if (r.status !== 'running' || !result.isConnected) return;
            await new Promise((ok) => window.setTimeout(ok, 1000));
            r = await api('GET', `/v1/webhook-endpoints/${endpoint.id}/recoveries/${r.id}`);
          }
        });
      },
    },
    h('label', { for: sinceId }, `Since (your local time, ${timeZone()})`),
    since,
    h('label', { for: untilId }, `Until (optional; default now; your local time, ${timeZone()})`),
    until,
    h('button', { type: 'submit', class: 'primary' }, 'Resend'),
  );
  return h(
    'div',
    {},
    h('div', { class: 'bar' }, h('h2', { tabindex: '-1' }, 'Resend missed messages'), back(ctx)),
    h('p', { class: 'url' }, endpoint.url),
    h(
      'p',
      {},
      'Every message since that time that this endpoint should have received, and did not, is sent again. Messages are kept 30 days.',
    ),
    form,
    result,
  );
}
