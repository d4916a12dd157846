import { api } from './api.js';
import { h, show, uid } from './dom.js';
import { addEndpointView } from './add-endpoint.js';
import { deliveriesView } from './deliveries.js';
import { editEndpointView } from './edit-endpoint.js';
import { eventsInWords } from './endpoint-form.js';
import { healthOf } from './health.js';
import { recoverView, statsView } from './stats.js';

/** Every endpoint of the shop, each with its health in words; one primary action: adding one. */
export async function endpointsView(ctx) {
  const { data } = await api('GET', '/v1/webhook-endpoints');
  return h(
    'div',
    {},
    h(
      'div',
      { class: 'bar' },
      h('h2', { tabindex: '-1' }, `Endpoints (${data.length})`),
      h(
        'div',
        { class: 'row' },
        h('button', { type: 'button', onclick: () => ctx.go(endpointsView) }, 'Refresh'),
        ctx.readOnly
          ? null
          : h(
              'button',
              { type: 'button', class: 'primary', onclick: () => ctx.go(addEndpointView) },
              'Add an endpoint',
            ),
      ),
    ),
    h(
      'p',
      { class: 'note' },
      'An endpoint is an address on your server, or in an app such as a CRM, that we send a message to each time something happens: a call ends, a job is created.',
    ),
    data.length === 0
      ? h(
          'p',
          { class: 'empty' },
          ctx.readOnly ? 'No endpoints yet.' : 'No endpoints yet. Add one to start receiving messages.',
        )
      : null,
    data.map((e) => endpointCard(ctx, e)),
  );
}

function endpointCard(ctx, e) {
  const secretSlot = h('div', {});
  const health = healthOf(e);
  const healthLine = h('p', { class: `health ${health.tone}` }, health.text);
  const run = (fn) => () => ctx.act(fn);
  return h(
    'article',
    { class: 'card', 'data-endpoint-id': e.id, 'aria-labelledby': `${e.id}-url` },
    h('h3', { id: `${e.id}-url`, class: 'url' }, e.url),
    e.description ? h('p', {}, e.description) : null,
    healthLine,
    h('p', { class: 'note' }, `Sends: ${eventsInWords(e.events)}.`),
    h(
      'p',
      { class: 'note' },
      'Filter: ',
      e.filter ? h('code', {}, JSON.stringify(e.filter)) : 'none (every event of its types)',
    ),
    h(
      'p',
      { class: 'note' },
      'Order: ',
      e.ordering === 'per_resource' ? "one call's or job's messages in the order they happened" : 'as they come',
    ),
    h(
      'p',
      { class: 'note' },
      'Pace: ',
      e.rate_limit
        ? `at most ${e.rate_limit} message${e.rate_limit === 1 ? '' : 's'} a second`
        : 'as fast as the receiver answers',
    ),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', onclick: () => ctx.go((c) => deliveriesView(c, e)) }, 'Deliveries'),
      h('button', { type: 'button', onclick: () => ctx.go((c) => statsView(c, e)) }, 'Stats'),
      ctx.readOnly
        ? null
        : h(
            'button',
            {
              type: 'button',
              onclick: run(async () => {
                await api('POST', `/v1/webhook-endpoints/${e.id}/test`);
                ctx.status(
                  `A test message is on its way to ${e.url}. Its health here changes when it arrives; Deliveries shows each attempt.`,
                );
                void followHealth(ctx, e, healthLine);
              }),
            },
            'Send a test',
          ),
    ),
    ctx.readOnly ? null : changeOrRemove(ctx, e, secretSlot, run),
    secretSlot,
  );
}

/** The rarer actions, folded away so each card shows three buttons, not seven. */
function changeOrRemove(ctx, e, secretSlot, run) {
  return h(
    'details',
    { class: 'more' },
    h('summary', {}, 'Change or remove'),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', onclick: () => ctx.go((c) => editEndpointView(c, e.id)) }, 'Edit settings'),
      h('button', { type: 'button', onclick: () => ctx.go((c) => recoverView(c, e)) }, 'Resend missed messages'),
      h(
        'button',
        {
          type: 'button',
          onclick: run(async () => {
            await api('PATCH', `/v1/webhook-endpoints/${e.id}`, { enabled: !e.enabled });
            await ctx.go(endpointsView);
            ctx.status(`${e.url} turned ${e.enabled ? 'off' : 'on'}.`);
          }),
        },
        e.enabled ? 'Turn off' : 'Turn on',
      ),
      h(
        'button',
        {
          type: 'button',
          onclick: (click) => {
            const button = click.currentTarget;
            return run(async () => {
              if (
                !window.confirm(
                  `Make a new signing secret for ${e.url}? The old one keeps working for 24 hours, so there is time to switch the receiver over.`,
                )
              )
                return;
              // One rotation per click: the button waits for the answer, and a repeat the network makes is applied once.
              button.disabled = true;
              try {
                const rotated = await api('POST', `/v1/webhook-endpoints/${e.id}/rotate-secret`, undefined, {
                  idempotent: true,
                });
                show(secretSlot, secretPanel(ctx, rotated.secret, secretSlot));
                ctx.status('New signing secret made. The previous one keeps working for 24 hours.');
              } finally {
                button.disabled = false;
              }
            })();
          },
        },
        'New signing secret',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'danger',
          onclick: run(async () => {
            if (!window.confirm(`Delete the endpoint ${e.url}? Messages still waiting for it are dropped.`)) return;
            await api('DELETE', `/v1/webhook-endpoints/${e.id}`);
            await ctx.go(endpointsView);
            ctx.status(`${e.url} deleted.`);
          }),
        },
        'Delete',
      ),
    ),
  );
}

/** A signing secret, shown once: it is in no later response, and Done drops it from the page. */
export function secretPanel(ctx, secret, slot, { primary = false } = {}) {
  const id = uid('secret');
  const noteId = uid('secret-note');
  const input = h('input', {
    id,
    type: 'text',
    readonly: true,
    value: secret,
    class: 'secret',
    spellcheck: 'false',
    'aria-describedby': noteId,
  });
  return h(
    'div',
    { class: 'once', role: 'group', 'aria-labelledby': id },
    h('label', { for: id }, 'Signing secret'),
    h(
      'p',
      { id: noteId, class: 'note' },
      'Copy it now and give it to whoever runs the receiver: it is shown only this once. The receiver uses it to check that each message really comes from us.',
    ),
    h(
      'div',
      { class: 'row' },
      input,
      h(
        'button',
        {
          type: 'button',
          class: primary ? 'primary' : null,
          onclick: () =>
            ctx.act(async () => {
              input.select();
              await navigator.clipboard.writeText(secret);
              ctx.status('Signing secret copied.');
            }),
        },
        'Copy secret',
      ),
      slot ? h('button', { type: 'button', onclick: () => slot.replaceChildren() }, 'Done') : null,
    ),
  );
}

/**
 * After "Send a test": asks for the endpoint every second, while its card is shown and for at
 * most a minute, until its health changes (the test arrived, or failed), then says the new
 * health on the card and in the status line.
 */
async function followHealth(ctx, e, line) {
  const before = JSON.stringify(e.health);
  const deadline = Date.now() + 60_000;
  while (line.isConnected && Date.now() < deadline) {
    await new Promise((ok) => window.setTimeout(ok, 1000));
    const now = await api('GET', `/v1/webhook-endpoints/${e.id}`).catch(() => null);
    if (!now || !line.isConnected) continue;
    if (JSON.stringify(now.health) === before && now.enabled === e.enabled) continue;
    Object.assign(e, { health: now.health, enabled: now.enabled });
    const health = healthOf(now);
    line.className = `health ${health.tone}`;
    line.textContent = health.text;
    ctx.status(`Test message to ${now.url}: ${health.text}`);
    return;
  }
}
