import { isAbsolute, relative } from 'node:path';
import type { DemoSeed } from './seed';
import { DEFAULT_STACK_FILE } from './stack-file';

export interface BannerInput {
  url: string;
  dynamodbEndpoint: string;
  tableName: string;
  /** The voice platform's way in, and where refused calls go. */
  ingestQueue?: { url: string; dlqUrl: string };
  /** Present when this start seeded the demo shop (its keys are shown now, once). */
  seeded?: DemoSeed;
  /** On a restart over kept data: the demo shop found in the table, if any. */
  found?: { id: string; name: string };
  /** Where the stack file was written (absolute). */
  stackFile: string;
  settings: string;
}

/**
 * What `npm start` prints once it listens: the keys (once), then commands that work as pasted on
 * whatever ports this start got. `API listening on` comes last: tools and tests wait for it.
 */
export function bannerLines(input: BannerInput): string[] {
  const { url, seeded, found } = input;
  const lines = [`DynamoDB: ${input.dynamodbEndpoint} (table ${input.tableName})`];
  if (input.ingestQueue)
    lines.push(
      `Ingest queue: ${input.ingestQueue.url} (the voice platform's way in; refused calls: ` +
        `${input.ingestQueue.dlqUrl})`,
    );
  let exportLine: string;
  if (seeded) {
    const { shop, writeKey, readKey, data } = seeded;
    lines.push(
      `Demo shop:     ${shop.id} (${shop.name})`,
      `Write key:     ${writeKey.key}   (all scopes, write)`,
      `Read-only key: ${readKey.key}   (all scopes, read-only)`,
      'These keys are shown once; only their hashes are stored.',
    );
    if (data)
      lines.push(
        `Demo data:     ${data.calls} calls, ` +
          `${data.jobs.pending + data.jobs.approved + data.jobs.declined} jobs ` +
          `(${data.jobs.pending} pending, ${data.jobs.approved} approved, ${data.jobs.declined} ` +
          `declined), ${data.events} events`,
      );
    exportLine = `  export KEY=${writeKey.key}`;
  } else if (found) {
    // A restart: the keys were shown once, so say which shop and how to get a new key.
    lines.push(
      `Demo shop:     ${found.id} (${found.name}; the table already had data, nothing seeded)`,
      `Get a key:     npm run cli -- key create --shop ${found.id} --scopes all --write`,
    );
    exportLine = '  export KEY=sk_test_…   # the key that command prints';
  } else {
    lines.push('The table already had data but no shop: create one with `npm run cli -- shop create --help`.');
    exportLine = '  export KEY=sk_test_…   # a key of that shop: npm run cli -- key create --help';
  }
  // Another stack file than the default must be named to the tools too.
  const inCheckout = relative(process.cwd(), input.stackFile);
  const file = inCheckout.startsWith('..') || isAbsolute(inCheckout) ? input.stackFile : inCheckout;
  const env = file === DEFAULT_STACK_FILE ? '' : `LOCAL_STACK_FILE=${file} `;
  lines.push(
    input.settings,
    `Base URL:      ${url}/v1`,
    `Portal:        ${url}/portal (paste a key with webhooks:write)`,
    `Stack file:    ${file} (npm run listen, receiver, cli and smoke find this stack there)`,
    '',
    'Try it:',
    exportLine,
    `  curl -H "Authorization: Bearer $KEY" ${url}/v1/calls`,
    `First webhook: \`${env}npm run listen\` in another terminal, then \`${env}npm run cli -- ` +
      `trigger call.completed\`.`,
    '',
    `API listening on ${url}`,
  );
  return lines;
}
