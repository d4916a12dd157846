import { api, EVENT_TYPES } from './api.js';
import { h, uid } from './dom.js';

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
  // Described as the API says when it answers; without that the choices still work.
  api('GET', '/v1/event-types')
    .then((list) => describe(list.data))
    .catch(() => undefined);
  return {
    element,
    selected: () => [...element.querySelectorAll('input:checked')].map((i) => i.value),
  };
}

/** An endpoint's settings as the API states them, with the defaults of a new endpoint. */
const NEW_ENDPOINT = {
  url: '',
  events: ['call.completed'],
  description: null,
  filter: null,
  ordering: 'none',
  rate_limit: null,
};

/**
 * The fields of an endpoint, filled from `initial` (an endpoint, or nothing for a new one): its
 * address, what it receives, the optional condition, order and pace, and a note. `read(ctx)`
 * gives every field as the API states it (null for none), or reports what to fix and gives
 * undefined.
 */
export function endpointFields(initial = NEW_ENDPOINT) {
  const urlId = uid('url');
  const hintId = uid('url-hint');
  const url = h('input', {
    id: urlId,
    type: 'url',
    required: true,
    inputmode: 'url',
    autocomplete: 'off',
    spellcheck: 'false',
    value: initial.url,
    'aria-describedby': hintId,
  });
  const choices = eventChoices(initial.events);
  const filterId = uid('filter');
  const filterHintId = uid('filter-hint');
  const filter = h(
    'textarea',
    { id: filterId, rows: 3, spellcheck: 'false', autocomplete: 'off', 'aria-describedby': filterHintId },
    initial.filter ? JSON.stringify(initial.filter) : '',
  );
  const orderId = uid('order');
  const ordered = h('input', { id: orderId, type: 'checkbox', checked: initial.ordering === 'per_resource' });
  const rateId = uid('rate');
  const rateHintId = uid('rate-hint');
  const rate = h('input', {
    id: rateId,
    type: 'number',
    min: 1,
    max: 1000,
    step: 1,
    inputmode: 'numeric',
    value: initial.rate_limit ?? '',
    'aria-describedby': rateHintId,
  });
  const descId = uid('desc');
  const description = h('input', { id: descId, type: 'text', maxlength: 500, value: initial.description ?? '' });
  const elements = [
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
      { open: initial.filter !== null },
      h('summary', {}, 'Only some of these messages (optional)'),
      h(
        'div',
        { class: 'stack wide' },
        h('label', { for: filterId }, 'Condition on the message, as JSON'),
        filter,
        h(
          'p',
          { id: filterHintId, class: 'note' },
          'For example {"data.emergency": true}, or {"data.outcome": {"$in": ["job_created", "emergency_escalated"]}}. Leave it empty to receive every message of the kinds chosen. The developer documentation lists what a condition may say.',
        ),
      ),
    ),
    h(
      'details',
      { open: initial.ordering === 'per_resource' || initial.rate_limit !== null },
      h('summary', {}, 'Order and pace (optional)'),
      h(
        'div',
        { class: 'stack wide' },
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
    ),
    h('label', { for: descId }, 'Note (optional): what this endpoint is for'),
    description,
  ];
  function read(ctx) {
    const events = choices.selected();
    if (events.length === 0) return void ctx.error('Choose at least one kind of message to send.');
    let condition = null;
    try {
      if (filter.value.trim()) condition = JSON.parse(filter.value);
    } catch {
      filter.focus();
      return void ctx.error(
        'The condition is not valid JSON: check its quotes and brackets, or leave it empty to receive every message of the kinds chosen.',
      );
    }
    return {
      url: url.value.trim(),
      events,
      description: description.value.trim() || null,
      filter: condition,
      ordering: ordered.checked ? 'per_resource' : 'none',
      // The API explains a number out of range in a sentence naming rate_limit.
      rate_limit: rate.value.trim() ? Number(rate.value) : null,
    };
  }
  return { elements, read };
}

/**
 * An endpoint's fields (filled from `initial`) in a form with its submit button: `onValues` gets
 * what the fields read, once they are valid.
 */
export function endpointForm(ctx, initial, submitLabel, onValues) {
  const fields = endpointFields(initial);
  return h(
    'form',
    {
      class: 'stack wide',
      onsubmit: (ev) => {
        ev.preventDefault();
        const values = fields.read(ctx);
        if (values) void onValues(values);
      },
    },
    fields.elements,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, submitLabel)),
  );
}
