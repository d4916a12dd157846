import { api, ApiError, setKey } from './api.js';
import { show } from './dom.js';
import { endpointsView } from './endpoints.js';

/**
 * The shell: the key form, the status and error lines, and one view at a time in #view.
 * Views get `ctx` to move between each other and to report; there is no URL routing, so
 * nothing about the session ever lands in the address bar or history.
 */
const $ = (id) => document.getElementById(id);
const viewEl = $('view');

const ctx = {
  status(text) {
    $('status').textContent = text;
  },
  error(err) {
    $('error').textContent = err ? (err instanceof ApiError ? `${err.message} (HTTP ${err.status})` : String(err.message ?? err)) : '';
  },
  /** Shows a view: `render(ctx)` returns its element (and may load data into it). */
  async go(render) {
    ctx.error(null);
    try {
      show(viewEl, await render(ctx));
      viewEl.querySelector('h2')?.focus();
    } catch (err) {
      ctx.error(err);
    }
  },
  /** Runs an action, reporting its failure instead of throwing. */
  async act(fn) {
    ctx.error(null);
    try {
      return await fn();
    } catch (err) {
      ctx.error(err);
      return undefined;
    }
  },
};

$('key-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const input = $('api-key');
  setKey(input.value.trim());
  input.value = '';
  try {
    await api('GET', '/v1/webhook-endpoints');
  } catch (err) {
    setKey(null);
    ctx.error(err);
    return;
  }
  $('forget').hidden = false;
  ctx.status('Connected.');
  await ctx.go(endpointsView);
});

$('forget').addEventListener('click', () => {
  setKey(null);
  $('forget').hidden = true;
  viewEl.replaceChildren();
  ctx.status('Key forgotten.');
  $('api-key').focus();
});
