import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { AppError } from '../shared/errors';
import { envelope } from '../shared/http/envelope';

/**
 * The webhook portal's files: the only paths this function answers, so no request can name
 * any other file. `GET /portal` is the page; the rest are what it loads.
 */
export const ASSETS: Record<string, { file: string; type: string }> = {
  '/portal': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/portal/portal.css': { file: 'portal.css', type: 'text/css; charset=utf-8' },
  '/portal/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/portal/api.js': { file: 'api.js', type: 'text/javascript; charset=utf-8' },
  '/portal/dom.js': { file: 'dom.js', type: 'text/javascript; charset=utf-8' },
  '/portal/endpoints.js': { file: 'endpoints.js', type: 'text/javascript; charset=utf-8' },
  '/portal/deliveries.js': { file: 'deliveries.js', type: 'text/javascript; charset=utf-8' },
  '/portal/stats.js': { file: 'stats.js', type: 'text/javascript; charset=utf-8' },
  '/portal/health.js': { file: 'health.js', type: 'text/javascript; charset=utf-8' },
  '/portal/time.js': { file: 'time.js', type: 'text/javascript; charset=utf-8' },
  '/portal/add-endpoint.js': { file: 'add-endpoint.js', type: 'text/javascript; charset=utf-8' },
  '/portal/endpoint-form.js': { file: 'endpoint-form.js', type: 'text/javascript; charset=utf-8' },
  '/portal/edit-endpoint.js': { file: 'edit-endpoint.js', type: 'text/javascript; charset=utf-8' },
  // Linked by the page, so the browser never asks for /favicon.ico (a 404).
  '/portal/favicon.svg': { file: 'favicon.svg', type: 'image/svg+xml' },
};

/**
 * Scripts and styles only from this origin (none inline), calls only to this origin (the /v1
 * API), no plugins, no framing, no form posts, no <base>: a receiver's text that slipped
 * into the page as markup still could not run or send anything.
 */
export const PORTAL_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': PORTAL_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  // Small files, changed with each deploy: revalidate rather than serve a stale mix.
  'cache-control': 'no-cache',
};

/**
 * The folder the files are read from: the bundle copies `portal/` next to the handler, and
 * Lambda runs in that folder (/var/task); locally the stack runs from the repository root.
 */
const PORTAL_DIR = join(process.cwd(), 'portal');
const cache = new Map<string, string>();

function read(file: string): string {
  let text = cache.get(file);
  if (text === undefined) {
    text = readFileSync(join(PORTAL_DIR, file), 'utf8');
    cache.set(file, text);
  }
  return text;
}

/**
 * `GET /portal` and `GET /portal/{file}` (and HEAD, without the body): public, no key. The page
 * takes a portal link's token from the URL fragment (never sent here) or asks for a key, and
 * keeps it in memory.
 */
export const handler = envelope<APIGatewayProxyEventV2>(async (event) => {
  const asset = ASSETS[event.rawPath];
  if (!asset)
    throw new AppError(
      'route_not_found',
      `Unrecognized request URL (${event.requestContext.http.method} ${event.rawPath}).`,
    );
  const body = event.requestContext.http.method === 'HEAD' ? '' : read(asset.file);
  return { statusCode: 200, headers: { 'content-type': asset.type, ...SECURITY_HEADERS }, body };
});
