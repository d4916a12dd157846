import { api, EVENT_TYPES } from './api.js';
import { h, show, uid, when } from './dom.js';
import { deliveriesView } from './deliveries.js';
import { recoverView, statsView } from './stats.js';

/** Every endpoint of the key's shop, each with its health and its actions. */
export async function endpointsView(ctx) {
  const { data } = await api('GET', '/v1/webhook-endpoints');
  return h('div', {},
    h('div', { class: 'bar' },
      h('h2', { tabindex: '-1' }, `Endpoints (${data.length})`),
      h('button', { type: 'button', onclick: () => ctx.go(endpointsView) }, 'Refresh')),
    data.length === 0 ? h('p', {}, 'No webhook endpoints yet: create one with POST /v1/webhook-endpoints.') : null,
    data.map((e) => endpointCard(ctx, e)));
}

function endpointCard(ctx, e) {
  const secretSlot = h('div', {});
  const circuit = e.health.circuit;
  const state = e.enabled ? 'Enabled' : `Disabled (${e.disabled_reason ?? 'manual'})`;
  const run = (fn) => () => ctx.act(fn);
  return h('article', { class: 'card', 'data-endpoint-id': e.id, 'aria-labelledby': `${e.id}-url` },
    h('h3', { id: `${e.id}-url`, class: 'url' }, e.url),
    e.description ? h('p', {}, e.description) : null,
    h('p', {}, 'Filter: ', e.filter ? h('code', {}, JSON.stringify(e.filter)) : 'none (every event of its types)'),
    h('p', {}, 'Rate limit: ', e.rate_limit ? `${e.rate_limit} per second` : 'none'),
    h('dl', { class: 'facts' },
      fact('Status', h('span', { class: e.enabled ? 'ok' : 'bad' }, state)),
      fact('Circuit', h('span', { class: circuit === 'closed' ? 'ok' : 'bad' }, circuit.replace('_', ' '))),
      fact('Consecutive failures', String(e.health.consecutive_failures)),
      fact('Failing since', when(e.failing_since)),
      fact('Last success', when(e.health.last_success_at)),
      fact('Last failure', when(e.health.last_failure_at)),
      e.health.next_probe_at ? fact('Next probe', when(e.health.next_probe_at)) : null,
      fact('ID', h('code', {}, e.id))),
    h('div', { class: 'actions' },
      h('button', { type: 'button', onclick: () => ctx.go((c) => deliveriesView(c, e)) }, 'Deliveries'),
      h('button', { type: 'button', onclick: () => ctx.go((c) => statsView(c, e)) }, 'Stats'),
      h('button', { type: 'button', onclick: () => ctx.go((c) => recoverView(c, e)) }, 'Recover'),
      h('button', { type: 'button', onclick: run(async () => {
        const event = await api('POST', `/v1/webhook-endpoints/${e.id}/test`);
        ctx.status(`Test event ${event.id} queued for ${e.url}.`);
      }) }, 'Send test'),
      h('button', { type: 'button', onclick: run(async () => {
        await api('PATCH', `/v1/webhook-endpoints/${e.id}`, { enabled: !e.enabled });
        ctx.status(`${e.url} ${e.enabled ? 'disabled' : 'enabled'}.`);
        await ctx.go(endpointsView);
      }) }, e.enabled ? 'Disable' : 'Enable'),
      h('button', { type: 'button', onclick: run(async () => {
        const rotated = await api('POST', `/v1/webhook-endpoints/${e.id}/rotate-secret`);
        show(secretSlot, secretPanel(ctx, rotated.secret, secretSlot));
        ctx.status('Secret rotated. The previous secret keeps verifying for a grace period.');
      }) }, 'Rotate secret'),
      h('button', { type: 'button', class: 'danger', onclick: run(async () => {
        if (!window.confirm(`Delete the endpoint ${e.url}? Its pending deliveries are cancelled.`)) return;
        await api('DELETE', `/v1/webhook-endpoints/${e.id}`);
        ctx.status(`${e.url} deleted.`);
        await ctx.go(endpointsView);
      }) }, 'Delete')),
    secretSlot,
    eventsForm(ctx, e));
}

const fact = (term, value) => h('div', {}, h('dt', {}, term), h('dd', {}, value));

/** The new secret, shown once: it is in no later response, and Done drops it from the page. */
function secretPanel(ctx, secret, slot) {
  const id = uid('secret');
  const input = h('input', { id, type: 'text', readonly: true, value: secret, class: 'secret', spellcheck: 'false' });
  return h('div', { class: 'once', role: 'group', 'aria-label': 'New signing secret' },
    h('label', { for: id }, 'New signing secret: shown only now, store it'),
    h('div', { class: 'row' },
      input,
      h('button', { type: 'button', onclick: () => ctx.act(async () => {
        input.select();
        await navigator.clipboard.writeText(secret);
        ctx.status('Secret copied to the clipboard.');
      }) }, 'Copy'),
      h('button', { type: 'button', onclick: () => slot.replaceChildren() }, 'Done')));
}

function eventsForm(ctx, e) {
  const all = e.events.includes('*');
  const boxes = ['*', ...EVENT_TYPES].map((type) => {
    const id = uid('ev');
    return h('span', { class: 'check' },
      h('input', { type: 'checkbox', id, value: type, checked: all ? type === '*' : e.events.includes(type) }),
      h('label', { for: id }, type === '*' ? 'All events (*)' : type));
  });
  const form = h('form', { class: 'events', onsubmit: (ev) => {
    ev.preventDefault();
    const events = [...form.querySelectorAll('input:checked')].map((i) => i.value);
    void ctx.act(async () => {
      await api('PATCH', `/v1/webhook-endpoints/${e.id}`, { events });
      ctx.status(`Events of ${e.url}: ${events.join(', ')}.`);
    });
  } },
  h('fieldset', {}, h('legend', {}, 'Events sent to this endpoint'), boxes),
  h('button', { type: 'submit' }, 'Save events'));
  return form;
}
