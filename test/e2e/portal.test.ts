import { simulatedCall } from '../../lib/cli/simulate';
import { hashKey } from '../../shared/domain/api-keys';
import { ingestCall } from '../../shared/domain/calls';
import { newId } from '../../shared/ids';
import { openPortalBrowser, type PortalBrowser } from '../helpers/browser';
import { call } from '../helpers/http';
import { closeReceivers, startReceiver, waitFor } from '../helpers/receiver';
import { startTestStack } from '../helpers/stack';

/**
 * The webhook portal in a real browser (test/helpers/browser.ts), against the local stack, as
 * the person a portal link is sent to uses it: no key pasted, plain words, one primary action.
 */
/** What a hostile receiver answers: markup that would run a script if it were ever parsed. */
const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> not ok';

type Stack = Awaited<ReturnType<typeof startTestStack>>;

/**
 * Every time the page shows, in its one format (portal/time.js) as Chromium in en-US writes it:
 * date, time to the second and the zone ("Nov 28, 2026, 6:04:05 PM EST"). The page runs in
 * New York's zone here, not the machine's UTC, so a zone the page did not name would show.
 */
const TIME = /[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}:\d{2}\s[AP]M (?:EST|EDT)/;
const ZONE = 'America/New_York';

// The browser globals the functions run in the page below use (the project's tsconfig has no DOM lib).
declare const window: { __pwned?: number; __violations: string[]; location: { href: string } };
interface PageElement {
  textContent: string | null;
  tagName: string;
  remove(): void;
  click(): void;
  querySelectorAll(selector: string): ArrayLike<PageElement>;
  cloneNode(deep: true): PageElement;
}
declare const document: {
  body: PageElement;
  activeElement: PageElement | null;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<{ offsetParent: unknown }>;
};
declare function getComputedStyle(el: PageElement): { outlineStyle: string };
declare const navigator: { clipboard: { readText(): Promise<string> } };
type HTMLInputElement = { value: string; checked: boolean };

describe('webhook portal in headless Chromium', () => {
  let stack: Stack;
  let b: PortalBrowser;

  beforeAll(async () => {
    stack = await startTestStack({ deliveryTimeoutMs: 2000 });
    b = await openPortalBrowser(stack.url);
    await b.page.emulateTimezone(ZONE);
  }, 60000);
  afterEach(() => closeReceivers());
  afterAll(async () => {
    await b?.close();
    await stack?.stop();
  });

  const key = () => stack.demo.writeKey.key;
  async function portalLink(body: unknown = {}): Promise<{ id: string; token: string; url: string }> {
    const r = await call(stack.url, 'POST', '/v1/portal-sessions', { key: key(), body });
    expect(r.status).toBe(201);
    return r.json as { id: string; token: string; url: string };
  }
  /** A fresh page load (the page keeps its credential in memory only), then the link. */
  async function open(url: string) {
    await b.page.goto('about:blank');
    return b.page.goto(url, { waitUntil: 'networkidle0' });
  }
  const literally = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  /** Buttons styled as the view's primary action that a person can see: never more than one. */
  const visiblePrimaries = () =>
    b.page.evaluate(
      () => Array.from(document.querySelectorAll('button.primary')).filter((el) => el.offsetParent !== null).length,
    );
  /**
   * What looks like a time of day in the page's own words (not in a payload, a receiver's answer
   * or an address) but is not in the one format with its zone; and how many times are.
   */
  async function times(): Promise<{ formatted: number; stray: string[] }> {
    const shown = await b.page.evaluate(() => {
      const copy = document.body.cloneNode(true);
      for (const raw of Array.from(copy.querySelectorAll('pre, code, script, style'))) raw.remove();
      return copy.textContent ?? '';
    });
    const words = shown.replace(/https?:\/\/\S+/g, ' ');
    const formatted = words.match(new RegExp(TIME.source, 'g'))?.length ?? 0;
    const stray = words.replace(new RegExp(TIME.source, 'g'), ' ').match(/.{0,30}\b\d{1,2}:\d{2}\b.{0,10}/g) ?? [];
    return { formatted, stray };
  }
  /** A view as a person sees it: screenshots and axe at both widths (b.snap), and every time in one format. */
  async function view(name: string) {
    await b.snap(name);
    const { formatted, stray } = await times();
    expect([name, stray]).toEqual([name, []]);
    return formatted;
  }
  /** The focused element and its outline: a heading focused by the page draws none. */
  const focusRing = () =>
    b.page.evaluate(() => {
      const el = document.activeElement;
      return el ? [el.tagName, getComputedStyle(el).outlineStyle] : [];
    });
  /** A click through the DOM: after a full-page screenshot Chromium's mouse coordinates no longer match the page's. */
  const domClick = (selector: string) => b.page.$eval(selector, (el) => (el as unknown as PageElement).click());

  it('signs in with a portal link (no key pasted), adds an endpoint and shows its secret once, sends a test and watches it arrive; then everything else the page does, in plain words', async () => {
    const { page, click, text, lineIs } = b;
    let secret = '';
    let failing = false; // while true the receiver answers 503: an event it misses
    const receiver = await startReceiver(
      () => [secret],
      (_n, res) =>
        failing ? res.writeHead(503).end('down') : res.writeHead(200, { 'content-type': 'text/html' }).end(HOSTILE),
    );
    const link = await portalLink({ expires_in: 1800 });

    // The link: the token leaves the address bar at once and is never sent anywhere but in Authorization.
    const response = await open(link.url);
    expect(response?.headers()['content-security-policy']).toMatch(/default-src 'self'.*connect-src 'self'/);
    expect(response?.headers()['referrer-policy']).toBe('no-referrer');
    expect(page.url()).toBe(`${stack.url}/portal`);
    await lineIs('who', new RegExp(`^${literally(stack.demo.shop.name)} · This link works until `));
    await lineIs('status', /^Signed in with your portal link\.$/);
    expect(await page.$eval('#sign-in', (el) => (el as unknown as { hidden: boolean }).hidden)).toBe(true);
    await page.waitForSelector('h2::-p-text(Endpoints (0))');
    expect(await text('#view')).toContain('No endpoints yet. Add one');
    expect(await visiblePrimaries()).toBe(1);
    expect(await view('1-signed-in-by-link')).toBeGreaterThan(0); // "This link works until …"
    expect(await text('#who')).toMatch(new RegExp(`This link works until ${TIME.source}$`));

    // Add an endpoint: address, what it receives, a note.
    await click('button::-p-text(Add an endpoint)');
    await page.waitForSelector('h2::-p-text(Add an endpoint)');
    // Each kind of message is described as GET /v1/event-types says, with an example to open.
    await page.waitForSelector('.check .note::-p-text(A call left a job in the work queue)');
    expect(await page.$$eval('.check details summary', (s) => s.length)).toBe(5);
    await page.type('input[type=url]', receiver.url);
    await click('label::-p-text(a job was created)');
    await page.type('input[type=text]', 'Partner CRM');
    // Only some messages: a condition that is not JSON is refused in a sentence, and nothing is created.
    await click('summary::-p-text(Only some of these messages)');
    await page.type('textarea', '{"data.emergency": {"$ne": tru');
    await click('button::-p-text(Add endpoint)');
    await lineIs('error', /^The condition is not valid JSON/);
    expect((await call(stack.url, 'GET', '/v1/webhook-endpoints', { key: key() })).json).toMatchObject({ data: [] });
    await page.type('textarea', 'e}}');
    await click('summary::-p-text(Order and pace)');
    await click('label::-p-text(Keep each call)');
    await page.type('input[type=number]', '5');
    expect(await visiblePrimaries()).toBe(1);
    await view('2-add-endpoint');
    // From the keyboard: after a full-page shot of a form taller than the screen, Chromium's mouse
    // coordinates no longer match the page's (a click lands beside the button).
    await page.focus('#view form button[type=submit]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('h2::-p-text(Endpoint added)');
    secret = await page.$eval('input.secret', (el) => (el as HTMLInputElement).value);
    expect(secret).toMatch(/^whsec_/);
    const endpointId = await page.$eval(
      '[data-endpoint-id]',
      (el) => (el as unknown as { dataset: { endpointId: string } }).dataset.endpointId,
    );
    await click('button::-p-text(Copy secret)');
    await lineIs('status', /^Signing secret copied\.$/);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    expect(await visiblePrimaries()).toBe(1);
    await view('3-secret-once');
    await click('button::-p-text(I have stored it)');
    const card = `article[data-endpoint-id="${endpointId}"]`;
    await page.waitForSelector(card);
    expect(await page.$('input.secret')).toBeNull(); // shown once: the list never has it
    expect(await text(`${card} h3`)).toBe(receiver.url);
    expect(await text(`${card} .health`)).toBe('Ready. Nothing has been sent to it yet.');
    expect(await text(card)).toContain('Sends: a call ended, a job was created.');
    expect(await text(card)).not.toMatch(/[Cc]ircuit|[Pp]robe|Recover/);
    expect((await call(stack.url, 'GET', `/v1/webhook-endpoints/${endpointId}`, { key: key() })).json).toMatchObject({
      url: receiver.url,
      events: ['call.completed', 'job.created'],
      description: 'Partner CRM',
      filter: { 'data.emergency': { $ne: true } },
      ordering: 'per_resource',
      rate_limit: 5,
    });
    expect(await text(card)).toContain('Filter: {"data.emergency":{"$ne":true}}');
    expect(await text(card)).toContain("Order: one call's or job's messages in the order they happened");
    expect(await text(card)).toContain('Pace: at most 5 messages a second');

    // Send a test and watch it arrive: at the receiver (signed with the secret shown), and in Deliveries.
    await click(`${card} button::-p-text(Send a test)`);
    await lineIs('status', /^A test message is on its way/);
    await waitFor(() => receiver.received.length === 1, 10000, 'the test message');
    expect(receiver.received[0]?.event.type).toBe('webhook_endpoint.test');
    await click(`${card} button::-p-text(Deliveries)`);
    await page.waitForSelector('h2::-p-text(Deliveries)');
    for (let i = 0; !(await page.$('.badge.succeeded')); i++) {
      if (i > 50) throw new Error('the delivery never showed as succeeded');
      await new Promise((r) => setTimeout(r, 200));
      await click('button::-p-text(Refresh)');
    }
    // Its attempt log, opened with the keyboard: the receiver's answer is shown as the characters it is.
    await page.focus('details.delivery summary');
    await page.keyboard.press('Enter');
    await page.waitForSelector('details.delivery[open] table.attempts');
    const cells = await page.$$eval('table.attempts tbody td', (tds) => tds.map((td) => td.textContent));
    expect([cells[2], cells[4]]).toEqual(['200', '—']);
    expect(await text('pre.snippet')).toBe(HOSTILE);
    expect(await page.$$('pre.snippet *')).toHaveLength(0);
    expect(await page.$$('main img, main script')).toHaveLength(0);
    expect(await page.evaluate(() => window.__pwned)).toBeUndefined();
    expect(await page.evaluate(() => window.__violations)).toEqual([]);
    expect(await visiblePrimaries()).toBe(1);
    await view('4-deliveries');

    // Event detail, and send it again to this endpoint.
    await click('details.delivery button::-p-text(Event evt_)');
    await page.waitForSelector('h2::-p-text(Event webhook_endpoint.test)');
    expect(await text('pre.payload')).toContain(endpointId);
    await view('4-event');
    await click('button::-p-text(Send again to this endpoint)');
    await lineIs('status', /is being sent again/);
    await waitFor(() => receiver.received.length === 2, 10000, 'the redelivery');

    // Stats.
    await click('button::-p-text(Back to deliveries)');
    await click('button::-p-text(Back to endpoints)');
    await click(`${card} button::-p-text(Stats)`);
    await page.waitForSelector('svg.chart rect');
    await page.waitForFunction(() => document.querySelector('[data-stat="attempts"]')?.textContent !== '0');
    expect(await text('[data-stat="success_rate"]')).toBe('100.0 %');
    // Attempts (requests sent) and deliveries (messages) are two groups, each named as such.
    expect(await page.$$eval('#view section h3', (hs) => hs.map((el) => el.textContent))).toEqual([
      'Attempts, last 24 hours',
      'Deliveries (messages)',
    ]);
    expect(await page.$$eval('#view section', (ss) => ss.map((el) => el.querySelectorAll('dt').length))).toEqual([
      6, 3,
    ]);
    expect(await page.$$eval('#view section:first-of-type dt', (ds) => ds.map((el) => el.textContent))).toEqual([
      'Attempts sent',
      'Attempts that succeeded',
      'Attempts that failed',
      'Success rate of attempts',
      'Typical answer time (half are faster)',
      'Slow answer time (95 in 100 are faster)',
    ]);
    expect(await page.$$eval('#view section:last-of-type dt', (ds) => ds.map((el) => el.textContent))).toEqual([
      'Messages waiting for their first attempt',
      'Messages waiting to be tried again',
      'Messages given up on (every attempt failed), last 24 hours',
    ]);
    await view('4-stats');

    // Resend missed messages: a call event the receiver missed (it answered 503), resent once it is back.
    failing = true;
    await ingestCall(
      stack.deps,
      simulatedCall(stack.demo.shop, { withJob: false, emergency: false, endedAt: new Date() }),
    );
    await waitFor(
      () => receiver.received.filter((r) => r.event.type === 'call.completed').length === 1,
      10000,
      'the call event',
    );
    failing = false;
    await click('button::-p-text(Back to endpoints)');
    await page.waitForSelector(card);
    expect(await text(`${card} .health`)).toMatch(
      new RegExp(`^The last delivery failed at ${TIME.source}; retrying\\.$`),
    );
    await click(`${card} summary::-p-text(Change or remove)`);
    await click(`${card} button::-p-text(Resend missed messages)`);
    const hourAgo = await page.evaluate(() => {
      const d = new Date(Date.now() - 3600_000);
      const p = (n: number) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
    });
    await page.$eval('input[type=datetime-local]', (el, v) => ((el as HTMLInputElement).value = v), hourAgo);
    await click('form button::-p-text(Resend)');
    await lineIs('status', new RegExp(`^1 message to send again for events from ${TIME.source} to ${TIME.source}\\.$`));
    await waitFor(
      () => receiver.received.filter((r) => r.event.type === 'call.completed').length === 2,
      10000,
      'the resent call event',
    );
    await view('5-resend');

    // Change or remove: turn off (health in words), a new secret (once, copied), delete. (Editing: its own test.)
    await click('button::-p-text(Back to endpoints)');
    await page.waitForSelector(card);
    await click(`${card} summary::-p-text(Change or remove)`);
    await click(`${card} button::-p-text(Turn off)`);
    await page.waitForFunction(
      (sel) =>
        document.querySelector(sel)?.textContent === 'Turned off. Nothing is sent to it until it is turned back on.',
      {},
      `${card} .health`,
    );
    await click(`${card} summary::-p-text(Change or remove)`);
    await click(`${card} button::-p-text(New signing secret)`);
    await page.waitForSelector(`${card} input.secret`);
    const rotated = await page.$eval(`${card} input.secret`, (el) => (el as HTMLInputElement).value);
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await click(`${card} button::-p-text(Copy secret)`);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(rotated);
    expect(await visiblePrimaries()).toBe(1);
    await view('6-change-or-remove');
    await click(`${card} button::-p-text(Done)`);
    expect(await page.$(`${card} input.secret`)).toBeNull();
    await click(`${card} button::-p-text(Delete)`);
    await lineIs('status', /deleted\.$/);
    await page.waitForFunction((sel) => !document.querySelector(sel), {}, card);

    // Losing the network is said as a sentence, not as a code.
    await page.setOfflineMode(true);
    await click('button::-p-text(Refresh)');
    await lineIs('error', /^Could not reach the service\. Check your internet connection and try again\.$/);
    await page.setOfflineMode(false);

    // Everything the page fetched was its own files (its icon included) or the /v1 API, none
    // missing, and the token was in no URL.
    expect(b.requested.filter((p) => !p.startsWith('/portal') && !p.startsWith('/v1/'))).toEqual([]);
    expect(b.notFound).toEqual([]);
    expect(b.requested.filter((p) => p.includes(link.token) || p.includes('token='))).toEqual([]);
  }, 180000);

  it('a read-only link shows the endpoints but offers nothing that changes them', async () => {
    const { page, text, lineIs } = b;
    const created = await call(stack.url, 'POST', '/v1/webhook-endpoints', {
      key: key(),
      body: { url: 'https://hooks.partner.example/viewer', events: ['*'] },
    });
    const link = await portalLink({ read_only: true });
    await open(link.url);
    await lineIs('who', /· View only$/);
    const card = `article[data-endpoint-id="${created.json.id as string}"]`;
    await page.waitForSelector(card);
    expect(await text(card)).toContain('Sends: every kind of message.');
    for (const label of ['Add an endpoint', 'Send a test', 'Delete', 'Turn off', 'New signing secret']) {
      expect([label, await page.$(`button::-p-text(${label})`)]).toEqual([label, null]);
    }
    expect(await page.$(`${card} details.more`)).toBeNull();
    await view('7-read-only');
    await page.locator(`${card} button::-p-text(Deliveries)`).click();
    await page.waitForSelector('h2::-p-text(Deliveries)');
    await call(stack.url, 'DELETE', `/v1/webhook-endpoints/${created.json.id as string}`, { key: key() });
  }, 60000);

  it('a revoked or an expired link is refused with a sentence that says so, and the page offers to sign in', async () => {
    const { page, lineIs } = b;
    const revoked = await portalLink();
    expect((await call(stack.url, 'DELETE', `/v1/portal-sessions/${revoked.id}`, { key: key() })).status).toBe(200);
    await open(revoked.url);
    await lineIs('error', /^This portal link was revoked at .+\. Ask for a new link\.$/);
    expect(await page.$eval('#error', (el) => el.textContent)).toMatch(TIME); // the time in the reader's own words
    expect(await page.$eval('#sign-in', (el) => (el as unknown as { hidden: boolean }).hidden)).toBe(false);
    expect(page.url()).toBe(`${stack.url}/portal`);

    const token = `pst_${'X'.repeat(40)}`;
    const now = Date.now();
    await stack.deps.portalSessions.create({
      id: newId('ps', now - 7_200_000),
      shop_id: stack.demo.shop.id,
      token_hash: hashKey(token),
      mode: 'test',
      read_only: false,
      shop_name: stack.demo.shop.name,
      issued_by: null,
      issuer_key_hash: null,
      created_at: new Date(now - 7_200_000).toISOString(),
      valid_until: new Date(now - 3_600_000).toISOString(),
      revoked_at: null,
    });
    await open(`${stack.url}/portal#token=${token}`);
    await lineIs('error', /^This portal link expired at .+\. Ask for a new link\.$/);
    await view('8-expired-link');
  }, 60000);

  it('falls back to a pasted API key: a wrong one is refused in a sentence, the right one shows its shop', async () => {
    const { page, click, lineIs } = b;
    await open(`${stack.url}/portal`);
    await view('0-sign-in');
    await page.type('#api-key', 'sk_test_wrong');
    await click('#key-form button[type=submit]');
    await lineIs('error', /^Invalid API key provided\.$/);
    await page.type('#api-key', key());
    await click('#key-form button[type=submit]');
    await lineIs('who', new RegExp(`^${literally(stack.demo.shop.name)} · Signed in with an API key$`));
    expect(await page.$eval('#api-key', (el) => (el as HTMLInputElement).value)).toBe('');
    await page.waitForSelector('h2::-p-text(Endpoints)');
    await click('#sign-out');
    await lineIs('status', /^Signed out\./);
    await view('9-signed-out');
    expect(await page.$eval('#view', (el) => el.childElementCount)).toBe(0);
    expect(b.requested.some((p) => p.includes(key()))).toBe(false);
  }, 60000);

  /** An endpoint made over the API, and the selector of its card. */
  async function endpoint(body: Record<string, unknown>): Promise<{ id: string; card: string; secret: string }> {
    const r = await call(stack.url, 'POST', '/v1/webhook-endpoints', { key: key(), body });
    expect(r.status).toBe(201);
    const id = r.json.id as string;
    return { id, card: `article[data-endpoint-id="${id}"]`, secret: r.json.secret as string };
  }
  const readEndpoint = async (id: string) =>
    (await call(stack.url, 'GET', `/v1/webhook-endpoints/${id}`, { key: key() })).json as Record<string, unknown>;
  /** Replaces what a field holds, as a person selecting it all and typing would. */
  async function retype(selector: string, value: string) {
    await b.page.$eval(selector, (el) => ((el as unknown as HTMLInputElement).value = ''));
    if (value) await b.page.type(selector, value);
  }
  async function openEdit(card: string) {
    await domClick(`${card} summary::-p-text(Change or remove)`);
    await domClick(`${card} button::-p-text(Edit settings)`);
    await b.page.waitForSelector('h2::-p-text(Edit endpoint)');
  }
  async function saveEdit() {
    await b.page.focus('#view form button[type=submit]');
    await b.page.keyboard.press('Enter');
  }

  it('edits every setting the card shows (address, messages, condition, order, pace, note) with PATCH, sending only what changed, and never over a change made elsewhere', async () => {
    const { page, text, lineIs } = b;
    const { id, card } = await endpoint({
      url: 'http://127.0.0.1:9/before',
      events: ['call.completed'],
      description: 'Before',
      filter: { 'data.emergency': true },
      ordering: 'per_resource',
      rate_limit: 5,
    });
    await open((await portalLink()).url);
    await page.waitForSelector(card);

    // The form starts from the endpoint as it is.
    await openEdit(card);
    expect(await page.$eval('input[type=url]', (el) => (el as HTMLInputElement).value)).toBe(
      'http://127.0.0.1:9/before',
    );
    expect(await page.$eval('textarea', (el) => (el as HTMLInputElement).value)).toBe('{"data.emergency":true}');
    expect(await page.$eval('input[type=number]', (el) => (el as HTMLInputElement).value)).toBe('5');
    expect(await page.$eval('form details input[type=checkbox]', (el) => (el as HTMLInputElement).checked)).toBe(true);
    expect(await page.$eval('input[type=text]', (el) => (el as HTMLInputElement).value)).toBe('Before');
    expect(
      await page.$$eval('fieldset input:checked', (is) => is.map((i) => (i as unknown as HTMLInputElement).value)),
    ).toEqual(['call.completed']);
    expect(await visiblePrimaries()).toBe(1);
    await view('10-edit-endpoint');

    // Saving nothing changed sends nothing.
    await saveEdit();
    await lineIs('status', /^Nothing to save: no setting was changed\.$/);

    // Someone else changes the note meanwhile: the save is refused, their change kept, the form refilled.
    expect(
      (
        await call(stack.url, 'PATCH', `/v1/webhook-endpoints/${id}`, {
          key: key(),
          body: { description: 'Elsewhere' },
        })
      ).status,
    ).toBe(200);
    await retype('input[type=number]', '7');
    await saveEdit();
    await lineIs(
      'error',
      new RegExp(`^Not saved: this endpoint was changed elsewhere at ${TIME.source}, after this form was opened\\.`),
    );
    expect(await readEndpoint(id)).toMatchObject({ description: 'Elsewhere', rate_limit: 5 });
    expect(await page.$eval('input[type=text]', (el) => (el as HTMLInputElement).value)).toBe('Elsewhere');

    // Every other setting changed in the page, then read back over the API; the note, untouched here, stays.
    await retype('input[type=url]', 'http://127.0.0.1:9/after');
    await domClick('label::-p-text(a call ended)');
    await domClick('label::-p-text(a job was declined)');
    await retype('textarea', '{"data.outcome": "job_created"}');
    await domClick('label::-p-text(Keep each call)');
    await retype('input[type=number]', '7');
    await saveEdit();
    await lineIs(
      'status',
      /^Saved http:\/\/127\.0\.0\.1:9\/after: changed its address, messages, condition, order, pace\.$/,
    );
    expect(await readEndpoint(id)).toMatchObject({
      url: 'http://127.0.0.1:9/after',
      events: ['job.declined'],
      filter: { 'data.outcome': 'job_created' },
      ordering: 'none',
      rate_limit: 7,
      description: 'Elsewhere',
    });
    await page.waitForSelector(card);
    expect(await text(`${card} h3`)).toBe('http://127.0.0.1:9/after');
    expect(await text(card)).toContain('Sends: a job was declined.');
    expect(await text(card)).toContain('Pace: at most 7 messages a second');
    expect(await text(card)).toContain('Order: as they come');

    // Emptied, the condition, the pace and the note are removed (null), not left as they were.
    await openEdit(card);
    await retype('textarea', '');
    await retype('input[type=number]', '');
    await retype('input[type=text]', '');
    await saveEdit();
    await lineIs('status', /: changed its condition, pace, note\.$/);
    expect(await readEndpoint(id)).toMatchObject({ filter: null, rate_limit: null, description: null });
    await call(stack.url, 'DELETE', `/v1/webhook-endpoints/${id}`, { key: key() });
  }, 90000);

  it('after "Send a test" the health on the card changes by itself once the test arrives', async () => {
    const { page, text, click, lineIs } = b;
    let secret = '';
    const receiver = await startReceiver(() => [secret]);
    const { id, card, ...made } = await endpoint({ url: receiver.url, events: ['call.completed'] });
    secret = made.secret;
    await open((await portalLink()).url);
    await page.waitForSelector(card);
    expect(await text(`${card} .health`)).toBe('Ready. Nothing has been sent to it yet.');
    await click(`${card} button::-p-text(Send a test)`);
    await waitFor(() => receiver.received.length === 1, 10000, 'the test message');
    // No Refresh: the card asks for the endpoint again until its health moves.
    await page.waitForFunction(
      (sel, src) => new RegExp(src).test(document.querySelector(sel)?.textContent ?? ''),
      { timeout: 20000 },
      `${card} .health`,
      `^Working\\. Last delivered at ${TIME.source}\\.$`,
    );
    await lineIs('status', new RegExp(`^Test message to ${literally(receiver.url)}: Working\\.`));
    await call(stack.url, 'DELETE', `/v1/webhook-endpoints/${id}`, { key: key() });
  }, 60000);

  it('a status or error line belongs to its view: moving to another view clears it', async () => {
    const { page, click, lineIs, text } = b;
    await open((await portalLink()).url);
    await lineIs('status', /^Signed in with your portal link\.$/);
    await click('button::-p-text(Add an endpoint)');
    await page.waitForSelector('h2::-p-text(Add an endpoint)');
    expect(await text('#status')).toBe('');
    await page.type('input[type=url]', 'http://127.0.0.1:9/x');
    await domClick('summary::-p-text(Only some of these messages)');
    await page.type('textarea', '{not json');
    await page.focus('#view form button[type=submit]');
    await page.keyboard.press('Enter');
    await lineIs('error', /^The condition is not valid JSON/);
    await click('button::-p-text(Cancel)');
    await page.waitForSelector('h2::-p-text(Endpoints)');
    expect([await text('#status'), await text('#error')]).toEqual(['', '']);
    expect(await page.$eval('#status', (el) => (el as unknown as { offsetParent: unknown }).offsetParent)).toBeNull();
  }, 60000);

  it('moves focus to each view heading without drawing a focus box; keyboard focus on a control stays visible', async () => {
    const { page } = b;
    await open((await portalLink()).url);
    await page.waitForSelector('h2::-p-text(Endpoints)');
    await page.waitForFunction(() => document.activeElement?.tagName === 'H2');
    expect(await focusRing()).toEqual(['H2', 'none']);
    // From the keyboard, where Chromium draws a ring on whatever the script focuses next.
    await page.focus('button::-p-text(Add an endpoint)');
    await page.keyboard.press('Enter');
    await page.waitForSelector('h2::-p-text(Add an endpoint)');
    await page.waitForFunction(() => document.activeElement?.textContent === 'Add an endpoint');
    expect(await focusRing()).toEqual(['H2', 'none']);
    await page.keyboard.press('Tab');
    expect(await focusRing()).toEqual(['BUTTON', 'solid']);
  }, 60000);

  it('has its own icon: the browser asks for no /favicon.ico, and nothing it asks for is missing', async () => {
    await open((await portalLink()).url);
    await waitFor(() => b.requested.includes('/portal/favicon.svg'), 10000, 'the icon request');
    const icon = await fetch(`${stack.url}/portal/favicon.svg`);
    expect([icon.status, icon.headers.get('content-type')]).toEqual([200, 'image/svg+xml']);
    expect(await icon.text()).toMatch(/^<svg /);
    expect(b.requested).not.toContain('/favicon.ico');
    expect(b.notFound).toEqual([]);
  }, 60000);
});
