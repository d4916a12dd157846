import { api, ApiError, setCredential, watchSession } from './api.js';
import { h, show } from './dom.js';
import { endpointsView } from './endpoints.js';
import { formatTime } from './time.js';

/*
 * A portal link carries its token in the fragment (#token=pst_…), which browsers never send
 * to a server. Take it and clear it from the address bar and history before anything else,
 * so it is not left on screen, in a bookmark or in a screenshot.
 */
function takeLinkToken() {
  const token = new URLSearchParams(window.location.hash.slice(1)).get('token');
  if (window.location.hash) window.history.replaceState(null, '', window.location.pathname + window.location.search);
  return token;
}
const linkToken = takeLinkToken();

/**
 * The shell: sign-in, who is signed in, the status and error lines, and one view at a time in
 * #view. Views get `ctx` to move between each other and to report; there is no URL routing,
 * so nothing about the session ever lands in the address bar or history.
 */
const $ = (id) => document.getElementById(id);
const viewEl = $('view');

const ctx = {
  /** A read-only portal link (or key): views leave out what would change anything. */
  readOnly: false,
  status(text) {
    $('status').textContent = text;
  },
  /** Shows a failure as a sentence; a refused credential sends the reader back to sign in. */
  error(err) {
    if (!err) return void ($('error').textContent = '');
    if (err instanceof ApiError && err.status === 401) signOut();
    $('error').textContent = typeof err === 'string' ? err : err instanceof ApiError ? err.message : pageTrouble(err);
  },
  /**
   * Shows a view: `render(ctx)` returns its element (and may load data into it). The status and
   * error lines speak of the view they were said on, so a new view starts without them: an
   * action that moves to another view reports after `go`.
   */
  async go(render) {
    ctx.error(null);
    ctx.status('');
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

function pageTrouble(err) {
  if (err?.name === 'NotAllowedError')
    return 'This browser did not allow copying. Select the text and copy it yourself.';
  return 'Something went wrong in this page. Reload it and try again.';
}

/** Who is signed in: the shop, and for a link, until when it works and whether it can change anything. */
function showWho(parts) {
  show($('who'), ...parts.flatMap((p, i) => (i === 0 ? [p] : [' · ', p])));
  $('who').hidden = parts.length === 0;
}

watchSession((s) => {
  ctx.readOnly = s.readOnly;
  showWho(
    [
      h('strong', {}, s.shopName),
      h('span', {}, `This link works until ${formatTime(s.expiresAt)}`),
      s.readOnly ? h('span', {}, 'View only') : null,
    ].filter(Boolean),
  );
});

async function signIn(credential, how) {
  setCredential(credential);
  ctx.readOnly = false;
  try {
    await api('GET', '/v1/webhook-endpoints');
  } catch (err) {
    setCredential(null);
    ctx.error(err);
    return;
  }
  if (how === 'key') await describeKey();
  $('sign-in').hidden = true;
  $('sign-out').hidden = false;
  await ctx.go(endpointsView);
  ctx.status(how === 'link' ? 'Signed in with your portal link.' : 'Signed in with your API key.');
}

/** A key says which shop it is for through GET /v1/me, when it may read it (settings:read). */
async function describeKey() {
  try {
    const me = await api('GET', '/v1/me');
    // By scope (a key without a write flag hears so from the API on its first change).
    ctx.readOnly = !me.key.scopes.includes('webhooks:write');
    showWho(
      [
        h('strong', {}, me.shop.name),
        h('span', {}, 'Signed in with an API key'),
        ctx.readOnly ? h('span', {}, 'View only') : null,
      ].filter(Boolean),
    );
  } catch {
    showWho([h('span', {}, 'Signed in with an API key')]);
  }
}

function signOut() {
  setCredential(null);
  viewEl.replaceChildren();
  showWho([]);
  $('sign-out').hidden = true;
  $('sign-in').hidden = false;
}

$('key-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const input = $('api-key');
  const key = input.value.trim();
  input.value = '';
  void signIn(key, 'key');
});

$('sign-out').addEventListener('click', () => {
  signOut();
  ctx.error(null);
  ctx.status('Signed out. Open your portal link again to come back.');
  $('sign-in-title').focus();
});

if (linkToken) void signIn(linkToken, 'link');
// Another link opened in this same tab changes only the fragment: no reload, so take it here.
window.addEventListener('hashchange', () => {
  const token = takeLinkToken();
  if (token) {
    signOut();
    void signIn(token, 'link');
  }
});
