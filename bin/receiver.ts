/**
 * Example webhook receiver: `npm run receiver -- --secret whsec_... [--port 4000]`.
 * Verifies every request with standardwebhooks on the raw body, deduplicates on
 * webhook-id, answers 204 at once and prints the event.
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

const USAGE = `Usage: npm run receiver -- --secret whsec_... [--port 4000]

An example webhook receiver: verifies each delivery's signature with the endpoint's
signing secret (shown once when the endpoint is created or its secret rotated), answers
204 and prints the event. For the demo shop without copying a secret: npm run listen.
Exit codes: 0 help, 2 bad usage.`;

function usage(message: string): never {
  console.error(`Error: ${message}\n\n${USAGE}`);
  process.exit(2);
}

let values: { secret?: string; port?: string; help?: boolean } = {};
try {
  ({ values } = parseArgs({ options: { secret: { type: 'string' }, port: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true }));
} catch (err) {
  usage((err as Error).message);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (!values.secret?.startsWith('whsec_')) usage('--secret whsec_... is required');
if (values.port !== undefined && !/^\d+$/.test(values.port)) usage(`--port must be a port number, got '${values.port}'`);
// During a rotation, pass the new secret: deliveries carry a signature for each valid secret.
const verifier = new Webhook(values.secret as string);
const seen = new Set<string>();
const port = Number(values.port ?? 4000);

createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8'); // verify the raw body, before parsing
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    let event: { id: string; type: string; data: unknown };
    try {
      event = verifier.verify(raw, headers) as typeof event;
    } catch (err) {
      console.error(`✗ rejected: ${err instanceof WebhookVerificationError ? err.message : String(err)}`);
      res.writeHead(400).end();
      return;
    }
    res.writeHead(204).end(); // acknowledge fast; do the work afterwards
    const id = headers['webhook-id'] ?? '';
    if (seen.has(id)) {
      console.log(`· duplicate ${id} ignored`);
      return;
    }
    seen.add(id);
    console.log(`✓ ${event.type} ${id}\n${JSON.stringify(event.data, null, 2)}`);
  });
}).listen(port, '127.0.0.1', () => console.log(`Receiver listening on http://127.0.0.1:${port}/ (register it as a webhook endpoint)`));
