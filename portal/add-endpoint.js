import { api, EVENT_TYPES } from './api.js';
import { h, uid } from './dom.js';
import { endpointsView, secretPanel } from './endpoints.js';

/** What each event means, for a person choosing what to receive. */
const EVENT_WORDS = {
  'call.completed': 'a call ended',
  'job.created': 'a job was created',
  'job.approved': 'a job was approved',
  'job.declined': 'a job was declined',
  'webhook_endpoint.disabled': 'an endpoint was turned off for failing',
};

export const eventsInWords = (events) =>
  events.includes('*') ? 'every kind of message' : events.map((t) => EVENT_WORDS[t] ?? t).join(', ');

/**
 * Checkboxes of the event types (and "everything"), labelled in words with the technical name
 * beside. `describe` adds what the API says of each type (GET /v1/event-types): its
 * description under the box, and an example message to open.
 */
export function eventChoices(selected) {
  const all = selected.includes('*');
  const notes = new Map();
  const boxes = ['*', ...EVENT_TYPES].map((type) => {
    const id = uid('ev');
    const noteId = uid('ev-note');
    const note = h('span', { id: noteId, class: 'note' });
    if (type !== '*') notes.set(type, note);
    return h(
      'span',
      { class: 'check' },
      h('input', {
        type: 'checkbox',
        id,
        value: type,
        checked: all ? type === '*' : selected.includes(type),
        ...(type === '*' ? {} : { 'aria-describedby': noteId }),
      }),
      h(
        'label',
        { for: id },
        type === '*' ? 'Everything, including kinds added later' : `When ${EVENT_WORDS[type] ?? type} `,
        type === '*' ? null : h('code', {}, type),
      ),
      type === '*' ? null : note,
    );
  });
  const element = h('fieldset', {}, h('legend', {}, 'Send a message when…'), boxes);
  const describe = (eventTypes) => {
    for (const { type, description, example } of eventTypes) {
      const note = notes.get(type);
      if (!note) continue;
      note.replaceChildren(
        description,
        h('details', {}, h('summary', {}, 'Example message'), h('pre', {}, JSON.stringify(example, null, 2))),
      );
    }
  };
  return {
    element,
    describe,
    selected: () => [...element.querySelectorAll('input:checked')].map((i) => i.value),
  };
}

/** Fills in the choices' descriptions when the API answers; without them the form still works. */
export function describeChoices(choices) {
  api('GET', '/v1/event-types')
    .then((list) => choices.describe(list.data))
    .catch(() => undefined);
}

/** Adding an endpoint: its address, what it receives, an optional note; then its secret, once. */
export function addEndpointView(ctx) {
  const urlId = uid('url');
  const hintId = uid('url-hint');
  const descId = uid('desc');
  const url = h('input', {
    id: urlId,
    type: 'url',
    required: true,
    inputmode: 'url',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': hintId,
  });
  const description = h('input', { id: descId, type: 'text', maxlength: 500 });
  const choices = eventChoices(['call.completed']);
  describeChoices(choices);
  const filterId = uid('filter');
  const filterHintId = uid('filter-hint');
  const filter = h('textarea', {
    id: filterId,
    rows: 3,
    spellcheck: 'false',
    autocomplete: 'off',
    'aria-describedby': filterHintId,
  });
  const orderId = uid('order');
  const ordered = h('input', { id: orderId, type: 'checkbox' });
  const rateId = uid('rate');
  const rateHintId = uid('rate-hint');
  const rate = h('input', {
    id: rateId,
    type: 'number',
    min: 1,
    max: 1000,
    step: 1,
    inputmode: 'numeric',
    'aria-describedby': rateHintId,
  });
  const form = h(
    'form',
    {
      class: 'stack wide',
      onsubmit: (ev) => {
        ev.preventDefault();
        const events = choices.selected();
        if (events.length === 0) return ctx.error('Choose at least one kind of message to send.');
        let condition;
        try {
          condition = filter.value.trim() ? JSON.parse(filter.value) : undefined;
        } catch {
          filter.focus();
          return ctx.error(
            'The condition is not valid JSON: check its quotes and brackets, or leave it empty to receive every message of the kinds chosen.',
          );
        }
        void ctx.act(async () => {
          const body = {
            url: url.value.trim(),
            events,
            ...(description.value.trim() ? { description: description.value.trim() } : {}),
            ...(condition === undefined ? {} : { filter: condition }),
            ...(ordered.checked ? { ordering: 'per_resource' } : {}),
            // The API explains a number out of range in a sentence naming rate_limit.
            ...(rate.value.trim() ? { rate_limit: Number(rate.value) } : {}),
          };
          const created = await api('POST', '/v1/webhook-endpoints', body, { idempotent: true });
          await ctx.go((c) => addedView(c, created));
          ctx.status(`Endpoint added: ${created.url}.`);
        });
      },
    },
    h('label', { for: urlId }, 'Address (URL) of the receiver'),
    url,
    h(
      'p',
      { id: hintId, class: 'note' },
      'A secure web address (it begins with https), given by whoever runs the receiver: for example your CRM\'s "incoming webhook" address.',
    ),
    choices.element,
    h(
      'details',
      {},
      h('summary', {}, 'Only some of these messages (optional)'),
      h('label', { for: filterId }, 'Condition on the message, as JSON'),
      filter,
      h(
        'p',
        { id: filterHintId, class: 'note' },
        'For example {"data.emergency": true}, or {"data.outcome": {"$in": ["job_created", "emergency_escalated"]}}. Leave it empty to receive every message of the kinds chosen. The developer documentation lists what a condition may say.',
      ),
    ),
    h(
      'details',
      {},
      h('summary', {}, 'Order and pace (optional)'),
      h(
        'span',
        { class: 'check' },
        ordered,
        h(
          'label',
          { for: orderId },
          "Keep each call's and each job's messages in the order they happened (a later one waits while an earlier one is still being retried)",
        ),
      ),
      h('label', { for: rateId }, 'At most this many messages a second'),
      rate,
      h(
        'p',
        { id: rateHintId, class: 'note' },
        'For a receiver that accepts only so many requests a second (1 to 1000). Leave it empty for no limit.',
      ),
    ),
    h('label', { for: descId }, 'Note (optional): what this endpoint is for'),
    description,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Add endpoint')),
  );
  return h(
    'div',
    {},
    h(
      'div',
      { class: 'bar' },
      h('h2', { tabindex: '-1' }, 'Add an endpoint'),
      h('button', { type: 'button', onclick: () => ctx.go(endpointsView) }, 'Cancel'),
    ),
    form,
  );
}

/** The new endpoint and its signing secret, shown this once; copying it is the one thing to do here. */
function addedView(ctx, created) {
  return h(
    'div',
    { 'data-endpoint-id': created.id },
    h('div', { class: 'bar' }, h('h2', { tabindex: '-1' }, 'Endpoint added')),
    h('p', { class: 'url' }, created.url),
    secretPanel(ctx, created.secret, null, { primary: true }),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', onclick: () => ctx.go(endpointsView) }, 'I have stored it: back to endpoints'),
    ),
  );
}
