import { api, DELIVERY_STATUSES, q } from './api.js';
import { h, show, uid, when } from './dom.js';
import { endpointsView } from './endpoints.js';

const PAGE = 10;

/** One endpoint's deliveries, newest first: a status filter and cursor pages (older / newer). */
export async function deliveriesView(ctx, endpoint) {
  const list = h('div', { class: 'list' });
  const pager = h('div', { class: 'actions' });
  const cursors = [null]; // cursors[i] opens page i
  let current = 0;
  const selectId = uid('status');
  const select = h(
    'select',
    { id: selectId, onchange: () => load(0) },
    h('option', { value: '' }, 'All'),
    DELIVERY_STATUSES.map((s) => h('option', { value: s }, s)),
  );

  async function load(page) {
    await ctx.act(async () => {
      const path = `/v1/webhook-endpoints/${endpoint.id}/deliveries${q({ status: select.value, limit: PAGE, cursor: cursors[page] })}`;
      const result = await api('GET', path);
      cursors.length = page + 1;
      current = page;
      if (result.next_cursor) cursors.push(result.next_cursor);
      show(
        list,
        result.data.length ? result.data.map((d) => deliveryItem(ctx, d, endpoint)) : [h('p', {}, 'No deliveries.')],
      );
      show(
        pager,
        h('button', { type: 'button', disabled: page === 0, onclick: () => load(page - 1) }, 'Newer'),
        h('span', { class: 'note' }, `Page ${page + 1}`),
        h('button', { type: 'button', disabled: !result.has_more, onclick: () => load(page + 1) }, 'Older'),
      );
    });
  }
  await load(0);
  return h(
    'div',
    {},
    h(
      'div',
      { class: 'bar' },
      h('h2', { tabindex: '-1' }, 'Deliveries'),
      h('button', { type: 'button', onclick: () => ctx.go(endpointsView) }, 'Back to endpoints'),
    ),
    h('p', { class: 'url' }, endpoint.url),
    h(
      'div',
      { class: 'row' },
      h('label', { for: selectId }, 'Status'),
      select,
      h('button', { type: 'button', class: 'primary', onclick: () => load(current) }, 'Refresh'),
    ),
    list,
    pager,
  );
}

/** A delivery: a summary line that expands (keyboard: Enter/Space on it) to its attempt log. */
function deliveryItem(ctx, d, endpoint) {
  return h(
    'details',
    { class: 'delivery', 'data-delivery-id': d.id },
    h(
      'summary',
      {},
      h('span', { class: `badge ${d.status}` }, d.status),
      ' ',
      h('span', {}, d.event_type),
      ' · ',
      h('span', {}, `${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`),
      ' · ',
      d.held_by
        ? h('span', { class: 'held' }, `waiting for an earlier message about the same call or job (${d.held_by}) · `)
        : null,
      when(d.last_attempt_at),
    ),
    h(
      'dl',
      { class: 'facts' },
      h('div', {}, h('dt', {}, 'Delivery'), h('dd', {}, h('code', {}, d.id))),
      h('div', {}, h('dt', {}, 'Next attempt'), h('dd', {}, when(d.next_attempt_at))),
    ),
    h(
      'button',
      { type: 'button', onclick: () => ctx.go((c) => eventView(c, d.event_id, endpoint)) },
      `Event ${d.event_id}`,
    ),
    attemptLog(d.attempt_log),
  );
}

/**
 * The attempts, oldest first. Every value comes from the receiver or its network (status,
 * error, the first 1 KiB of its answer): all of it becomes text nodes, never markup.
 */
function attemptLog(log) {
  if (log.length === 0) return h('p', { class: 'note' }, 'No attempt yet.');
  const caption = h('caption', {}, 'Attempt log');
  const columns = ['#', 'At', 'Status', 'Duration', 'Error', 'Answer'];
  const head = h(
    'tr',
    {},
    columns.map((c) => h('th', { scope: 'col' }, c)),
  );
  // data-label: the column name a narrow screen shows beside each value (portal.css).
  const cell = (i, value) => h('td', { 'data-label': columns[i] }, value);
  const rows = log.map((a) =>
    h(
      'tr',
      {},
      cell(0, String(a.attempt)),
      cell(1, when(a.at)),
      cell(2, a.response_status === null ? '—' : String(a.response_status)),
      cell(3, `${a.duration_ms} ms`),
      cell(4, a.error === null ? '—' : inWords(a.error)),
      cell(5, a.response_snippet === null ? '—' : h('pre', { class: 'snippet' }, a.response_snippet)),
    ),
  );
  return h(
    'div',
    { class: 'scroll' },
    h('table', { class: 'attempts' }, caption, h('thead', {}, head), h('tbody', {}, rows)),
  );
}

/** A receiver's failure as a sentence, with the technical detail after it (for whoever fixes the receiver). */
export function inWords(error) {
  const known = [
    [/^circuit_open$/, 'Not sent: the receiver kept failing, so we are waiting before trying again'],
    [/^timeout/, 'No answer within the time limit'],
    [/^ECONNREFUSED/, 'The receiver refused the connection (is it running?)'],
    [/^ECONNRESET|^EPIPE/, 'The receiver closed the connection before answering'],
    [/^ENOTFOUND|^EAI_AGAIN/, "The receiver's address could not be found"],
    [/^EREFUSEDTARGET/, 'Not sent: the address leads to a private network'],
    [/^(CERT_|UNABLE_TO_VERIFY|DEPTH_ZERO|SELF_SIGNED|ERR_TLS)/, "The receiver's security certificate is not valid"],
  ];
  const hit = known.find(([re]) => re.test(error));
  return hit ? `${hit[1]}. (${error})` : error;
}

/** An event, its payload and every delivery of it; redeliver to this endpoint or to all. */
export async function eventView(ctx, eventId, endpoint) {
  const event = await api('GET', `/v1/events/${encodeURIComponent(eventId)}`);
  const redeliver = (body, label) =>
    ctx.act(async () => {
      await api('POST', `/v1/events/${event.id}/redeliver`, body);
      await ctx.go((c) => eventView(c, eventId, endpoint));
      ctx.status(`Event ${event.id} is being sent again ${label}.`);
    });
  return h(
    'div',
    {},
    h(
      'div',
      { class: 'bar' },
      h('h2', { tabindex: '-1' }, `Event ${event.type}`),
      endpoint
        ? h(
            'button',
            { type: 'button', onclick: () => ctx.go((c) => deliveriesView(c, endpoint)) },
            'Back to deliveries',
          )
        : null,
    ),
    h(
      'dl',
      { class: 'facts' },
      h('div', {}, h('dt', {}, 'ID'), h('dd', {}, h('code', {}, event.id))),
      h('div', {}, h('dt', {}, 'Created'), h('dd', {}, when(event.timestamp))),
    ),
    ctx.readOnly
      ? null
      : h(
          'div',
          { class: 'actions' },
          endpoint
            ? h(
                'button',
                {
                  type: 'button',
                  class: 'primary',
                  onclick: () => redeliver({ endpoint_ids: [endpoint.id] }, `to ${endpoint.url}`),
                },
                'Send again to this endpoint',
              )
            : null,
          h(
            'button',
            {
              type: 'button',
              class: endpoint ? null : 'primary',
              onclick: () => redeliver({}, 'to every endpoint that receives it'),
            },
            'Send again to all',
          ),
        ),
    h('h3', {}, 'Payload'),
    h('pre', { class: 'payload' }, JSON.stringify(event.data, null, 2)),
    h('h3', {}, `Deliveries (${event.deliveries.length})`),
    event.deliveries.map((d) => deliveryItem(ctx, d, endpoint)),
  );
}
