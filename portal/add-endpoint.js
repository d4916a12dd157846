import { api } from './api.js';
import { h } from './dom.js';
import { endpointForm } from './endpoint-form.js';
import { endpointsView, secretPanel } from './endpoints.js';

/** Adding an endpoint: its address, what it receives, an optional note; then its secret, once. */
export function addEndpointView(ctx) {
  const form = endpointForm(ctx, undefined, 'Add endpoint', (values) =>
    ctx.act(async () => {
      // What is left at its default is left out: the API's defaults apply.
      const body = {
        url: values.url,
        events: values.events,
        ...(values.description === null ? {} : { description: values.description }),
        ...(values.filter === null ? {} : { filter: values.filter }),
        ...(values.ordering === 'none' ? {} : { ordering: values.ordering }),
        ...(values.rate_limit === null ? {} : { rate_limit: values.rate_limit }),
      };
      const created = await api('POST', '/v1/webhook-endpoints', body, { idempotent: true });
      await ctx.go((c) => addedView(c, created));
      ctx.status(`Endpoint added: ${created.url}.`);
    }),
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
