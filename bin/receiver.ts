/**
 * Example webhook receiver: `WEBHOOK_SECRET=whsec_... npm run receiver [-- --port 4000]`.
 * Verifies every request with standardwebhooks on the raw body, deduplicates on
 * webhook-id, answers 204 at once and prints the event. The secret comes from the
 * environment: on the command line every user of the machine could read it in `ps`.
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { DEFAULT_RECEIVER_PORT, findStack, recordedStack } from '../lib/local/stack-file';

const lookup = findStack();
const stack = recordedStack(lookup);
const defaultPort = stack?.receiver.port ?? DEFAULT_RECEIVER_PORT;

const USAGE = `Usage: WEBHOOK_SECRET=whsec_... npm run receiver [-- --port ${defaultPort}]

An example webhook receiver: verifies each delivery's signature with the endpoint's
signing secret (shown once when the endpoint is created or its secret rotated), answers
204 and prints the event. The secret is read from WEBHOOK_SECRET, never from the command
line (where \`ps\` shows it). For the demo shop without copying a secret: npm run listen.
Exit codes: 0 help, 1 could not listen, 2 bad usage.`;

function usage(message: string): never {
  console.error(`Error: ${message}\n\n${USAGE}`);
  process.exit(2);
}

let values: { secret?: string; port?: string; help?: boolean } = {};
try {
  ({ values } = parseArgs({
    options: { secret: { type: 'string' }, port: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  }));
} catch (err) {
  usage((err as Error).message);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (values.secret !== undefined)
  usage(
    '--secret is not accepted: a secret on the command line is visible to every user in `ps`. ' +
      'Set WEBHOOK_SECRET instead.',
  );
const secret = process.env.WEBHOOK_SECRET?.trim() ?? '';
if (!secret.startsWith('whsec_'))
  usage(
    secret === ''
      ? `WEBHOOK_SECRET is not set: export the endpoint's signing secret (whsec_…) first${registerHint()}`
      : "WEBHOOK_SECRET must be the endpoint's signing secret, whsec_…",
  );
if (values.port !== undefined && !/^\d+$/.test(values.port))
  usage(`--port must be a port number, got '${values.port}'`);
// During a rotation, use the new secret: deliveries carry a signature for each valid secret.
let verifier: Webhook;
try {
  verifier = new Webhook(secret);
} catch {
  usage('WEBHOOK_SECRET is not a signing secret: copy the whole whsec_… value');
}
const seen = new Set<string>();
const port = Number(values.port ?? defaultPort);

/** How to get a secret from the running local stack: create the endpoint this receiver will be. */
function registerHint(): string {
  if (!stack || lookup.state !== 'running') return '.';
  const url = `http://127.0.0.1:${values.port ?? defaultPort}/`;
  return `. It comes once, in the answer that creates the endpoint:
  curl -s -X POST ${stack.api_url}/v1/webhook-endpoints -H "Authorization: Bearer $KEY" \\
    -H 'Content-Type: application/json' -d '{"url":"${url}","events":["*"]}'`;
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8'); // verify the raw body, before parsing
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    let event: { id: string; type: string; data: unknown };
    try {
      event = verifier.verify(raw, headers) as typeof event;
    } catch (err) {
      const reason = err instanceof WebhookVerificationError ? err.message : String(err);
      console.error(`✗ rejected: ${reason}`);
      // The reason lands in the delivery's attempt log (`response_snippet`).
      res.writeHead(400, { 'content-type': 'text/plain' }).end(reason);
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
})
  .on('error', (err: NodeJS.ErrnoException) => {
    console.error(
      `Could not listen on 127.0.0.1:${port}: ` +
        `${err.code === 'EADDRINUSE' ? 'the port is in use (choose another with --port)' : err.message}`,
    );
    process.exit(1);
  })
  .listen(port, '127.0.0.1', () => {
    const address = server.address();
    console.log(
      `Receiver listening on ` +
        `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}/ ` +
        `(register it as a webhook endpoint)`,
    );
  });
