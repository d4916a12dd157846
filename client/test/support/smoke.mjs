/**
 * Runs the built package (client/dist) in a bare Node, outside jest: a list retried after a 503
 * and followed to its end, and a webhook signed and verified. Prints what it saw as one JSON line.
 * Usage: node smoke.mjs <path of dist/index.js>
 */
import { createServer } from 'node:http';

const { ShopCalls, webhooks } = await import(process.argv[2]);
const pages = [
  { status: 503, body: {} },
  { status: 200, body: { object: 'list', data: [{ id: 'call_1' }], has_more: true, next_cursor: 'c2' } },
  { status: 200, body: { object: 'list', data: [{ id: 'call_2' }], has_more: false, next_cursor: null } },
];
let requests = 0;
const server = createServer((req, res) => {
  const page = pages[requests++] ?? pages[pages.length - 1];
  res.writeHead(page.status, { 'content-type': 'application/json' }).end(JSON.stringify(page.body));
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseUrl = `http://127.0.0.1:${server.address().port}`;
const client = new ShopCalls({ apiKey: 'sk_test_smoke', baseUrl, sleep: async () => {} });
const ids = [];
for await (const call of client.calls.list()) ids.push(call.id);
server.close();

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const body = JSON.stringify({ id: 'evt_1', object: 'event', type: 'webhook_endpoint.test', timestamp: 't', data: {} });
const event = await webhooks.verify(body, await webhooks.sign({ id: 'evt_1', body, secret }), secret);
console.log(JSON.stringify({ node: process.version, ids, requests, verified: event.type }));
