import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import axeCore, { type AxeResults, type RunOptions } from 'axe-core';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/**
 * Debian's Chromium (CHROMIUM_PATH, default /usr/bin/chromium; .ci/run installs it) driven by
 * puppeteer-core, for the portal's tests. Screenshots at 375 px and a desktop width go to
 * test-results/portal/ (git-ignored); each one is also checked with axe-core against WCAG 2.2 AA.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SHOTS = join(process.cwd(), 'test-results', 'portal');
const VIEWPORTS = [
  { name: 'mobile', width: 375, height: 812 },
  { name: 'desktop', width: 1280, height: 900 },
];

/** The WCAG 2.0, 2.1 and 2.2 success criteria up to level AA, as axe-core tags its rules. */
export const WCAG_AA_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

// The browser globals the functions run in the page use (the project's tsconfig has no DOM lib).
declare const window: { __violations: string[]; axe?: unknown };
declare const axe: { run(context: unknown, options: RunOptions): Promise<AxeResults> };
declare const document: {
  documentElement: { scrollWidth: number; clientWidth: number };
  getElementById(id: string): { textContent: string | null } | null;
  addEventListener(
    type: 'securitypolicyviolation',
    listener: (e: { violatedDirective: string; blockedURI: string }) => void,
  ): void;
};

export interface PortalBrowser {
  browser: Browser;
  page: Page;
  /** Every network request the page made, as sent: same-origin path and query, other origins in full. */
  requested: string[];
  /** Every response that was a 404, as `404 <path>`: a missing file or icon shows up here. */
  notFound: string[];
  /** Screenshots at 375 px and 1280 px, each width also checked with axe (`accessibility`). */
  snap(name: string): Promise<void>;
  /** The WCAG 2.2 AA violations axe-core finds in the page as it is now, one readable line per rule and element. */
  accessibility(): Promise<string[]>;
  text(selector: string): Promise<string>;
  click(selector: string): Promise<void>;
  /** Waits for the text of an element (by id) to match; a timeout says what the status and error lines showed. */
  lineIs(id: 'status' | 'error' | 'who', pattern: RegExp): Promise<void>;
  close(): Promise<void>;
}

export async function openPortalBrowser(origin: string): Promise<PortalBrowser> {
  mkdirSync(SHOTS, { recursive: true });
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Chromium's sandbox cannot start as root in a container; the page is our own, on loopback.
    // One locale whatever the machine's, so the tests can say what a formatted time looks like.
    args: [
      ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--lang=en-US',
    ],
  });
  await browser
    .defaultBrowserContext()
    .overridePermissions(origin, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
  const page = await browser.newPage();
  const requested: string[] = [];
  const notFound: string[] = [];
  // Network requests only (Chromium's own data: icons, e.g. the date picker's, are not fetches),
  // as they go on the wire: path and query (Chromium names a navigation with its fragment, which it never sends).
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (url.protocol === 'http:' || url.protocol === 'https:')
      requested.push(`${url.origin === origin ? '' : url.origin}${url.pathname}${url.search}`);
  });
  page.on('response', (r) => {
    if (r.status() === 404) notFound.push(`404 ${new URL(r.url()).pathname}`);
  });
  page.on('pageerror', (e) => console.log('page error:', e));
  page.on('dialog', (d) => void d.accept());
  // Runs outside the page's CSP (a DevTools hook): records any policy violation, e.g. a blocked inline handler.
  await page.evaluateOnNewDocument(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`),
    );
  });
  const text = (selector: string) => page.$eval(selector, (el) => el.textContent ?? '');
  async function accessibility(): Promise<string[]> {
    // Through DevTools, like the hook above: the page's CSP (no inline script) does not apply.
    if (!(await page.evaluate(() => window.axe !== undefined))) await page.evaluate(axeCore.source);
    const violations = await page.evaluate(
      (tags) => axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] }),
      WCAG_AA_TAGS,
    );
    return violations.violations.flatMap((v) =>
      v.nodes.map((n) =>
        `${v.id} (${v.impact ?? 'no impact'}): ${v.help} at ${n.target.join(' ')}; ${n.failureSummary ?? ''}`.replace(
          /\s+/g,
          ' ',
        ),
      ),
    );
  }
  return {
    browser,
    page,
    requested,
    notFound,
    text,
    accessibility,
    click: (selector) => page.locator(selector).click(),
    /**
     * A screenshot at each width (a file that is there and not empty); at 375 px nothing may be
     * wider than the screen, and at each width axe finds no WCAG 2.2 AA violation.
     */
    async snap(name) {
      for (const v of VIEWPORTS) {
        await page.setViewport({ width: v.width, height: v.height });
        const overflow = await page.evaluate(
          () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
        );
        expect([name, v.name, overflow]).toEqual([name, v.name, 0]);
        const path = join(SHOTS, `${name}-${v.name}.png`);
        await page.screenshot({ path, fullPage: true });
        expect(statSync(path).size).toBeGreaterThan(1000);
        expect([name, v.name, await accessibility()]).toEqual([name, v.name, []]);
      }
    },
    async lineIs(id, pattern) {
      await page
        .waitForFunction(
          (i, src) => new RegExp(src).test(document.getElementById(i)?.textContent ?? ''),
          { timeout: 10000 },
          id,
          pattern.source,
        )
        .catch(async () => {
          throw new Error(
            `#${id} never matched ${pattern}: status "${await text('#status')}", error "${await text('#error')}", who "${await text('#who')}"`,
          );
        });
    },
    async close() {
      const proc = browser.process();
      await browser.close().catch(() => proc?.kill('SIGKILL'));
    },
  };
}
