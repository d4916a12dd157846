import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { simulatedCall } from '../../lib/cli/simulate';
import { ingestCall } from '../../shared/domain/calls';
import { call } from '../helpers/http';
import { closeReceivers, startReceiver, waitFor } from '../helpers/receiver';
import { startTestStack } from '../helpers/stack';

/**
 * The webhook portal in a real browser: Debian's Chromium (CHROMIUM_PATH, default
 * /usr/bin/chromium; .ci/run installs it) driven by puppeteer-core, against the local stack.
 * Screenshots of each view, at 375 px and at a desktop width, go to test-results/portal/.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = join(process.cwd(), 'test-results', 'portal');
const VIEWPORTS = [
  { name: 'mobile', width: 375, height: 812 },
  { name: 'desktop', width: 1280, height: 900 },
];
/** What a hostile receiver answers: markup that would run a script if it were ever parsed. */
const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> not ok';

type Stack = Awaited<ReturnType<typeof startTestStack>>;

// The browser globals the functions run in the page below use (the project's tsconfig has no DOM lib).
declare const window: { __pwned?: number; __violations: string[] };
declare const document: {
  documentElement: { scrollWidth: number; clientWidth: number };
  getElementById(id: string): { textContent: string | null } | null;
  querySelector(selector: string): { textContent: string | null } | null;
  addEventListener(type: 'securitypolicyviolation', listener: (e: { violatedDirective: string; blockedURI: string }) => void): void;
};
declare const navigator: { clipboard: { readText(): Promise<string> } };
type HTMLInputElement = { value: string };

describe('webhook portal in headless Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  const requested: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    stack = await startTestStack({ deliveryTimeoutMs: 2000 });
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      // Chromium's sandbox cannot start as root in a container; the page is our own, on loopback.
      args: [...(process.getuid?.() === 0 ? ['--no-sandbox'] : []), '--disable-dev-shm-usage', '--no-first-run'],
    });
    await browser.defaultBrowserContext().overridePermissions(stack.url, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
    page = await browser.newPage();
    // Network requests only (Chromium's own data: icons, e.g. the date picker's, are not fetches).
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.protocol === 'http:' || url.protocol === 'https:') requested.push(`${url.origin === new URL(stack.url).origin ? '' : url.origin}${url.pathname}`);
    });
    page.on('pageerror', (e) => console.log('page error:', e));
    page.on('dialog', (d) => void d.accept());
    // Runs outside the page's CSP (a DevTools hook): records any policy violation, e.g. a blocked inline handler.
    await page.evaluateOnNewDocument(() => {
      window.__violations = [];
      document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
  }, 60000);
  afterEach(() => closeReceivers());
  afterAll(async () => {
    const proc = browser?.process();
    await browser?.close().catch(() => proc?.kill('SIGKILL'));
    await stack?.stop();
  });

  /** A screenshot at each width; at 375 px nothing may be wider than the screen. */
  async function snap(name: string): Promise<void> {
    for (const v of VIEWPORTS) {
      await page.setViewport({ width: v.width, height: v.height });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect([name, v.name, overflow]).toEqual([name, v.name, 0]);
      await page.screenshot({ path: join(SHOTS, `${name}-${v.name}.png`), fullPage: true });
    }
  }
  const text = (selector: string) => page.$eval(selector, (el) => el.textContent ?? '');
  const click = (selector: string) => page.locator(selector).click();
  /** Waits for the status line to match; a timeout says what the status and error lines showed. */
  async function statusIs(pattern: RegExp): Promise<void> {
    await page.waitForFunction((src) => new RegExp(src).test(document.getElementById('status')?.textContent ?? ''), { timeout: 10000 }, pattern.source).catch(async () => {
      throw new Error(`status never matched ${pattern}: status "${await text('#status')}", error "${await text('#error')}"`);
    });
  }

  it('loads without a key, then shows endpoints, a test delivery with its attempt log (hostile answer as inert text), event redelivery, stats, recovery and the endpoint actions', async () => {
    const key = stack.demo.writeKey.key;
    let secret = '';
    let failing = false; // while true the receiver answers 503: an event it misses
    const receiver = await startReceiver(() => [secret], (_n, res) => (failing ? res.writeHead(503).end('down') : res.writeHead(200, { 'content-type': 'text/html' }).end(HOSTILE)));
    const created = await call(stack.url, 'POST', '/v1/webhook-endpoints', { key, body: { url: receiver.url, events: ['call.completed'], description: 'Partner CRM' } });
    expect(created.status).toBe(201);
    const endpointId = created.json.id as string;
    secret = created.json.secret as string;
    const card = `article[data-endpoint-id="${endpointId}"]`;

    // The page: public, strict CSP, nothing inline.
    const response = await page.goto(`${stack.url}/portal`, { waitUntil: 'networkidle0' });
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("default-src 'self'");
    expect(response?.headers()['content-security-policy']).toContain("connect-src 'self'");
    await snap('0-key');

    // A wrong key is refused with the API's message; the real one connects.
    await page.type('#api-key', 'sk_test_wrong');
    await click('#key-form button[type=submit]');
    await page.waitForFunction(() => (document.getElementById('error')?.textContent ?? '').includes('(HTTP 401)'));
    await page.type('#api-key', key);
    await click('#key-form button[type=submit]');
    await page.waitForSelector(card);
    expect(await page.$eval('#api-key', (el) => (el as HTMLInputElement).value)).toBe(''); // not left in the form
    expect(await text(`${card} h3`)).toBe(receiver.url);
    expect(await text(card)).toContain('closed');
    await snap('1-endpoints');

    // Send a test: the receiver gets it and answers with markup.
    await click(`${card} button::-p-text(Send test)`);
    await statusIs(/^Test event evt_/);
    await waitFor(() => receiver.received.length === 1, 10000, 'the test event');
    expect(receiver.received[0]?.event.type).toBe('webhook_endpoint.test');

    // Its delivery appears (refresh until its row says succeeded); open its attempt log with the keyboard.
    await click(`${card} button::-p-text(Deliveries)`);
    await page.waitForSelector('h2::-p-text(Deliveries)');
    for (let i = 0; !(await page.$('.badge.succeeded')); i++) {
      if (i > 50) throw new Error('the delivery never showed as succeeded');
      await new Promise((r) => setTimeout(r, 200));
      await click('button::-p-text(Refresh)');
    }
    await page.focus('details.delivery summary');
    await page.keyboard.press('Enter');
    await page.waitForSelector('details.delivery[open] table.attempts');
    const cells = await page.$$eval('table.attempts tbody td', (tds) => tds.map((td) => td.textContent));
    expect(cells[2]).toBe('200');
    expect(cells[3]).toMatch(/^\d+ ms$/);
    expect(cells[4]).toBe('—');
    // The answer is shown as the characters it is: no element was made of it, nothing ran or loaded.
    expect(await text('pre.snippet')).toBe(HOSTILE);
    expect(await page.$$('pre.snippet *')).toHaveLength(0);
    expect(await page.$$('main img, main script')).toHaveLength(0);
    expect(await page.evaluate(() => window.__pwned)).toBeUndefined();
    expect(await page.evaluate(() => window.__violations)).toEqual([]);
    expect(requested.filter((p) => p === '/x' || p === '/portal/x')).toEqual([]);
    await snap('2-deliveries');

    // The status filter and its empty result.
    await page.select('select', 'failed');
    await page.waitForSelector('.list p::-p-text(No deliveries.)');
    await page.select('select', '');
    await click('details.delivery summary');
    await page.waitForSelector('details.delivery[open]');

    // Event detail, and redeliver to this endpoint: the receiver gets it again.
    await click('details.delivery button::-p-text(Event evt_)');
    await page.waitForSelector('h2::-p-text(Event webhook_endpoint.test)');
    expect(await text('pre.payload')).toContain(endpointId);
    await snap('3-event');
    await click('button::-p-text(Redeliver to this endpoint)');
    await statusIs(/queued again/);
    await waitFor(() => receiver.received.length === 2, 10000, 'the redelivery');

    // Stats of the endpoint.
    await click('button::-p-text(Back to deliveries)');
    await click('button::-p-text(Back to endpoints)');
    await click(`${card} button::-p-text(Stats)`);
    await page.waitForSelector('svg.chart rect');
    await page.waitForFunction(() => document.querySelector('[data-stat="Attempts"]')?.textContent !== '0');
    expect(await text('[data-stat="Success rate"]')).toBe('100.0 %');
    expect(await text('[data-stat="Latency p95"]')).toMatch(/^\d+ ms$/);
    await snap('4-stats');

    // Recover: a call event the receiver missed (it answered 503; the retry is a minute away),
    // recovered since an hour ago once the receiver is back: delivered again now.
    failing = true;
    await ingestCall(stack.deps, simulatedCall(stack.demo.shop, { withJob: false, emergency: false, endedAt: new Date() }));
    await waitFor(() => receiver.received.filter((r) => r.event.type === 'call.completed').length === 1, 10000, 'the call event');
    failing = false;
    await click('button::-p-text(Back to endpoints)');
    await click(`${card} button::-p-text(Recover)`);
    const hourAgo = await page.evaluate(() => {
      const d = new Date(Date.now() - 3600_000);
      const p = (n: number) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
    });
    await page.$eval('input[type=datetime-local]', (el, v) => ((el as HTMLInputElement).value = v), hourAgo);
    await click('form button::-p-text(Recover)');
    await statusIs(/^1 delivery queued/);
    await waitFor(() => receiver.received.filter((r) => r.event.type === 'call.completed').length === 2, 10000, 'the recovered call event');
    await snap('5-recover');

    // Endpoint actions: events filter, disable, rotate (secret shown once, copied), delete.
    await click('button::-p-text(Back to endpoints)');
    await page.waitForSelector(card);
    await click(`${card} label::-p-text(job.created)`);
    await click(`${card} button::-p-text(Save events)`);
    await statusIs(/call\.completed, job\.created/);
    await click(`${card} button::-p-text(Disable)`);
    await page.waitForFunction((sel) => document.querySelector(sel)?.textContent?.includes('Disabled (manual)'), {}, card);
    await click(`${card} button::-p-text(Rotate secret)`);
    await page.waitForSelector(`${card} input.secret`);
    const shown = await page.$eval(`${card} input.secret`, (el) => (el as HTMLInputElement).value);
    expect(shown).toMatch(/^whsec_/);
    await click(`${card} button::-p-text(Copy)`);
    await statusIs(/copied/);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(shown);
    await snap('6-secret');
    await click(`${card} button::-p-text(Done)`);
    expect(await page.$(`${card} input.secret`)).toBeNull();
    const listed = await call(stack.url, 'GET', `/v1/webhook-endpoints/${endpointId}`, { key });
    expect(listed.json).toMatchObject({ enabled: false, events: ['call.completed', 'job.created'] });

    await click(`${card} button::-p-text(Delete)`);
    await statusIs(/deleted/);
    await page.waitForFunction((sel) => !document.querySelector(sel), {}, card);
    expect((await call(stack.url, 'GET', `/v1/webhook-endpoints/${endpointId}`, { key })).status).toBe(404);

    // Forget key: the view goes, and the next connect needs the key again.
    await click('#forget');
    await statusIs(/^Key forgotten\.$/);
    expect(await page.$eval('#view', (el) => el.childElementCount)).toBe(0);

    // Everything the page fetched was its own files or the /v1 API, and the key was never in a URL.
    // (Chromium asks for /favicon.ico on its own; the page links none.)
    expect(requested.filter((p) => !p.startsWith('/portal') && !p.startsWith('/v1/') && p !== '/favicon.ico')).toEqual([]);
    expect(requested.some((p) => p.includes(key))).toBe(false);
  }, 120000);
});
