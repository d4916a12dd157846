/**
 * `npm run listen [-- --port 4242] [--shop SHOP_ID] [--json]`: receive the demo shop's webhooks
 * on this machine, each verified, without copying a secret. Pair with
 * `npm run cli -- trigger call.completed`. Finds the table of the running `npm start` in its
 * stack file (lib/local/stack-file.ts), whatever its ports.
 */
import '../lib/local/lambda-runtime';
import { parseArgs } from 'node:util';
import { operatorDeps } from '../lib/cli/deps';
import { startListener } from '../lib/cli/listen';
import { explainFailure } from '../lib/cli/target';
import { DEFAULT_LISTEN_PORT, findStack, localTableEnv, recordedStack } from '../lib/local/stack-file';
import { scanShops } from '../shared/store/operator-scan';
import { isId } from '../shared/ids';
import { logger } from '../shared/logger';

const USAGE = `Usage: npm run listen -- [--port 4242] [--shop SHOP_ID] [--json]

Registers (or reuses) a webhook endpoint http://127.0.0.1:PORT/webhooks for the shop
(default: the demo shop, the oldest in the table), subscribed to every event type, and
prints every delivery after verifying its signature (the client library's webhooks.verify).
  --port   loopback port to listen on (default ${DEFAULT_LISTEN_PORT}; the same port reuses the same endpoint)
  --shop   the shop (default: the demo shop seeded by the first \`npm start\`)
  --json   also print each event's full payload
Then, in another terminal: npm run cli -- trigger call.completed
Exit codes: 0 stopped with Ctrl-C, 1 failed (e.g. the table could not be reached), 2 bad usage.`;

if (!process.env.POWERTOOLS_LOG_LEVEL) logger.setLogLevel('WARN');

function usage(message: string): never {
  console.error(`Error: ${message}\n\n${USAGE}`);
  process.exit(2);
}

let values: { port?: string; shop?: string; json?: boolean; help?: boolean };
try {
  ({ values } = parseArgs({
    options: {
      port: { type: 'string' },
      shop: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  }));
} catch (err) {
  usage((err as Error).message);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const stack = findStack();
const port = Number(values.port ?? recordedStack(stack)?.listen.port ?? DEFAULT_LISTEN_PORT);
if (!Number.isInteger(port) || port < 0 || port > 65535) usage(`--port must be a port number, got '${values.port}'`);

async function main(): Promise<void> {
  const deps = operatorDeps();
  const shop = values.shop
    ? isId('shop', values.shop)
      ? await deps.shops.get(values.shop)
      : null
    : (await scanShops(deps.db))[0];
  if (!shop)
    usage(
      values.shop ? `No such shop: ${values.shop}` : 'The table has no shop: start the local stack first (`npm start`)',
    );
  const listener = await startListener(
    deps,
    shop,
    { port, json: values.json },
    { out: (l) => console.log(l), err: (l) => console.error(l) },
  );
  console.log(`Listening on ${listener.url} for shop ${shop.id} (${shop.name})`);
  console.log(
    `${listener.reused ? 'Reusing' : 'Registered'} webhook endpoint ${listener.endpointId} ` +
      `(every event type); deliveries are verified with its signing secret.`,
  );
  console.log('Trigger one: npm run cli -- trigger call.completed   (Ctrl-C to stop)');
  const stop = () =>
    void listener.close().then(({ disabled }) => {
      if (disabled)
        console.log(
          `Disabled webhook endpoint ${listener.endpointId} (the next listen on this port enables it again).`,
        );
      process.exit(0);
    });
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err: unknown) => {
  const endpoint = localTableEnv(process.env, stack).DYNAMODB_ENDPOINT;
  console.error(`Could not listen: ${explainFailure(err, { local: true, endpoint, stack })}`);
  process.exit(1);
});
