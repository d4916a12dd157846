import { api } from './api.js';
import { h } from './dom.js';
import { endpointForm } from './endpoint-form.js';
import { endpointsView } from './endpoints.js';
import { formatTime } from './time.js';

/** The fields a person can change, as PATCH /v1/webhook-endpoints/{id} names them, in words. */
const FIELD_WORDS = {
  url: 'address',
  events: 'messages',
  filter: 'condition',
  ordering: 'order',
  rate_limit: 'pace',
  description: 'note',
};

const sameEvents = (a, b) => [...a].sort().join() === [...b].sort().join();
const sameJson = (a, b) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** Only what the form changes from the endpoint it was filled from: a field nobody touched is never sent. */
export function changedFields(loaded, values) {
  const changes = {};
  if (values.url !== loaded.url) changes.url = values.url;
  if (!sameEvents(values.events, loaded.events)) changes.events = values.events;
  if (!sameJson(values.filter, loaded.filter)) changes.filter = values.filter;
  if (values.ordering !== (loaded.ordering ?? 'none')) changes.ordering = values.ordering;
  if (values.rate_limit !== (loaded.rate_limit ?? null)) changes.rate_limit = values.rate_limit;
  if (values.description !== (loaded.description ?? null)) changes.description = values.description;
  return changes;
}

/** Changing an endpoint: every setting the list shows, filled from the endpoint as it is now. */
export async function editEndpointView(ctx, id) {
  const loaded = await api('GET', `/v1/webhook-endpoints/${id}`);
  const form = endpointForm(ctx, loaded, 'Save changes', (values) => ctx.act(() => save(ctx, loaded, values)));
  return h(
    'div',
    { 'data-endpoint-id': loaded.id },
    h(
      'div',
      { class: 'bar' },
      h('h2', { tabindex: '-1' }, 'Edit endpoint'),
      h('button', { type: 'button', onclick: () => ctx.go(endpointsView) }, 'Cancel'),
    ),
    h('p', { class: 'url' }, loaded.url),
    form,
  );
}

async function save(ctx, loaded, values) {
  const changes = changedFields(loaded, values);
  const names = Object.keys(changes);
  if (names.length === 0) return ctx.status('Nothing to save: no setting was changed.');
  // PATCH has no version check (the last write wins). Its answer's updated_at moves with every
  // change of settings or secret, so a different one now means someone changed the endpoint
  // after this form was filled: saving would silently undo what they did.
  const current = await api('GET', `/v1/webhook-endpoints/${loaded.id}`);
  if (current.updated_at !== loaded.updated_at) {
    await ctx.go((c) => editEndpointView(c, loaded.id));
    return ctx.error(
      `Not saved: this endpoint was changed elsewhere at ${formatTime(current.updated_at)}, after this form was opened. The form now shows its current settings; make your change again.`,
    );
  }
  const updated = await api('PATCH', `/v1/webhook-endpoints/${loaded.id}`, changes);
  await ctx.go(endpointsView);
  ctx.status(`Saved ${updated.url}: changed its ${names.map((n) => FIELD_WORDS[n]).join(', ')}.`);
}
