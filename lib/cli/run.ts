import { parseArgs } from 'node:util';
import { issueKey, parseScopes, type KeyMode } from '../../shared/domain/api-keys';
import { SUBSCRIBABLE_EVENT_TYPES } from '../../shared/domain/event-types';
import { createShop, PLANS, toShopResource, type Shop } from '../../shared/domain/shop';
import { canonicalTimeZone } from '../../shared/domain/shop-schema';
import { ingestCall } from '../../shared/domain/calls';
import { isId } from '../../shared/ids';
import { scanShopKeys, scanShops } from '../../shared/store/operator-scan';
import { simulatedCall } from './simulate';
import { isTriggerType, trigger } from './trigger';
import { enableEndpoint, endpointLine, eventLines, listShopEndpoints, showEvent } from './webhooks';
import { portalList, portalOpen, portalRevoke } from './portal';
import type { ApiDeps as Deps } from '../../shared/wiring/api';

export interface Io {
  out(line: string): void;
  err(line: string): void;
  /** The message of a failure, for an operator (default: the error's own). */
  explain?(err: unknown): string;
  /** Where the target's API answers (lib/cli/target.ts): the links the CLI prints start with it. */
  apiUrl?: string;
}

/** Bad usage or input: exit code 2, nothing changed. */
export class UsageError extends Error {}

type Options = Record<string, { type: 'string' | 'boolean' }>;
type Values = Record<string, string | boolean | undefined>;

/**
 * One CLI command. The table below is the whole CLI: parsing, `--help` and the usage
 * listing all read it, so a new command is one more entry.
 */
export interface CommandSpec {
  /** The words that name it, e.g. `shop create`. */
  name: string;
  summary: string;
  /** What follows the name, e.g. `--shop SHOP_ID [--json]`. */
  synopsis: string;
  /** More lines for `--help`: what each option means. */
  details?: string[];
  options: Options;
  /** Positional arguments it takes (after the name), at most. */
  positionals?: number;
  run(args: { values: Values; positionals: string[] }, deps: Deps, io: Io): Promise<void>;
}

function required(values: Values, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value.trim();
}

async function shopById(deps: Deps, shopId: string): Promise<Shop> {
  const shop = isId('shop', shopId) ? await deps.shops.get(shopId) : null;
  if (!shop) throw new UsageError(`No such shop: ${shopId}`);
  return shop;
}

/** `--shop`, or else the demo shop: the table's oldest, seeded by the first `npm start`. */
async function shopOrDemo(deps: Deps, values: Values): Promise<Shop> {
  if (values.shop !== undefined) return shopById(deps, required(values, 'shop'));
  const oldest = (await scanShops(deps.db))[0];
  if (!oldest)
    throw new UsageError('The table has no shop: start the local stack (`npm start`) or pass --shop SHOP_ID');
  return oldest;
}

const json = { json: { type: 'boolean' } } as const;
const JSON_LINE = '--json       print JSON instead of text';

export const COMMANDS: CommandSpec[] = [
  {
    name: 'shop create',
    summary: 'create a shop',
    synopsis:
      '--name NAME --owner-email EMAIL [--timezone ZONE] [--trade TRADE] [--phone E164] [--plan starter|pro] [--json]',
    details: [
      '--timezone   IANA time zone (default America/New_York)',
      '--trade      plumbing, electrical, hvac…',
      '--phone      the line number, E.164 (one is assigned if omitted)',
      JSON_LINE,
    ],
    options: {
      name: { type: 'string' },
      'owner-email': { type: 'string' },
      timezone: { type: 'string' },
      trade: { type: 'string' },
      phone: { type: 'string' },
      plan: { type: 'string' },
      ...json,
    },
    run: async ({ values: v }, deps, io) => {
      const email = required(v, 'owner-email');
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
        throw new UsageError(`--owner-email '${email}' is not an email address`);
      const timezone = typeof v.timezone === 'string' ? canonicalTimeZone(v.timezone) : undefined;
      if (timezone === null) throw new UsageError(`--timezone '${String(v.timezone)}' is not an IANA time zone`);
      const phone = v.phone as string | undefined;
      if (phone !== undefined && !/^\+[1-9]\d{6,14}$/.test(phone))
        throw new UsageError(`--phone '${phone}' is not E.164 (+15551234567)`);
      const plan = (v.plan as string | undefined) ?? 'starter';
      if (!(plan in PLANS)) throw new UsageError(`--plan must be one of ${Object.keys(PLANS).join(', ')}`);
      const shop = await createShop(deps, {
        name: required(v, 'name'),
        owner_email: email,
        timezone,
        trade: v.trade as string | undefined,
        phone_number: phone,
        plan: plan as keyof typeof PLANS,
      });
      io.out(v.json ? JSON.stringify(toShopResource(shop)) : `Created shop ${shop.id} (${shop.name})`);
    },
  },
  {
    name: 'shop list',
    summary: 'list every shop, oldest first (the demo shop is the first)',
    synopsis: '[--json]',
    details: ['Reads the whole table (an operator listing, not for hot paths).', JSON_LINE],
    options: { ...json },
    run: async ({ values: v }, deps, io) => {
      const shops = await scanShops(deps.db);
      if (v.json) return io.out(JSON.stringify(shops.map(toShopResource)));
      if (shops.length === 0) return io.out('No shops.');
      io.out(shops.map((s) => `${s.id}  ${s.name}  (${s.trade}, ${s.plan.name}, created ${s.created_at})`).join('\n'));
    },
  },
  {
    name: 'key create',
    summary: 'issue an API key for a shop (shown once)',
    synopsis: '--shop SHOP_ID --scopes a,b,...|all [--write] [--mode test|live] [--json]',
    details: [
      '--scopes     comma-separated scopes, or all',
      '--write      allow POST and PATCH (default: read-only)',
      '--mode       test (default) or live',
      JSON_LINE,
    ],
    options: {
      shop: { type: 'string' },
      scopes: { type: 'string' },
      write: { type: 'boolean' },
      mode: { type: 'string' },
      ...json,
    },
    run: async ({ values: v }, deps, io) => {
      const shopId = (await shopById(deps, required(v, 'shop'))).id;
      let scopes;
      try {
        scopes = parseScopes(required(v, 'scopes'));
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      const mode = (v.mode as string | undefined) ?? 'test';
      if (mode !== 'test' && mode !== 'live') throw new UsageError('--mode must be test or live');
      const { record, key } = await issueKey(deps.apiKeys, {
        shopId,
        scopes,
        write: v.write === true,
        mode: mode as KeyMode,
      });
      const out = {
        id: record.id,
        key,
        shop_id: shopId,
        scopes: record.scopes,
        write: record.write,
        mode: record.mode,
      };
      io.out(v.json ? JSON.stringify(out) : `Created key ${record.id}: ${key}\n(shown once; only its hash is stored)`);
    },
  },
  {
    name: 'key list',
    summary: "list a shop's API keys (ids and scopes; a key itself is never stored)",
    synopsis: '--shop SHOP_ID [--json]',
    details: ['Reads the whole table (an operator listing, not for hot paths).', JSON_LINE],
    options: { shop: { type: 'string' }, ...json },
    run: async ({ values: v }, deps, io) => {
      const shop = await shopById(deps, required(v, 'shop'));
      const keys = (await scanShopKeys(deps.db, shop.id)).map((k) => ({
        id: k.id,
        mode: k.mode,
        scopes: k.scopes,
        write: k.write,
        revoked: k.revoked,
        created_at: k.created_at,
        revoked_at: k.revoked_at,
      }));
      if (v.json) return io.out(JSON.stringify(keys));
      if (keys.length === 0) return io.out(`Shop ${shop.id} has no keys.`);
      io.out(
        keys
          .map(
            (k) =>
              `${k.id}  ${k.mode}  ${k.write ? 'write' : 'read-only'}  ` +
              `${k.revoked ? `REVOKED ${k.revoked_at ?? ''}` : 'active'}  created ` +
              `${k.created_at}  ${k.scopes.join(',')}`,
          )
          .join('\n'),
      );
    },
  },
  {
    name: 'key revoke',
    summary: 'revoke an API key and the portal sessions it made (takes effect on their next request)',
    synopsis: '--key-id KEY_ID [--json]',
    details: [JSON_LINE],
    options: { 'key-id': { type: 'string' }, ...json },
    run: async ({ values: v }, deps, io) => {
      const keyId = required(v, 'key-id');
      const record = isId('key', keyId) ? await deps.apiKeys.revoke(keyId, deps.now().toISOString()) : null;
      if (!record) throw new UsageError(`No such key: ${keyId}`);
      io.out(
        v.json
          ? JSON.stringify({ id: record.id, revoked: true, revoked_at: record.revoked_at })
          : `Revoked key ${record.id}`,
      );
    },
  },
  {
    name: 'portal open',
    summary: "print a link to a shop's webhook portal (a portal session: no API key needed to use it)",
    synopsis: '--shop SHOP_ID [--read-only] [--expires-in SECONDS] [--mode test|live] [--api-url URL] [--json]',
    details: [
      '--read-only  the link can look but not change anything',
      '--expires-in how long the link works, 60 to 86400 seconds (default 3600)',
      '--mode       whose rate limit the link gets: test (default) or live',
      "--api-url    where the API answers (default: the local stack, or the stack's ApiUrl output)",
      JSON_LINE,
    ],
    options: {
      shop: { type: 'string' },
      'read-only': { type: 'boolean' },
      'expires-in': { type: 'string' },
      mode: { type: 'string' },
      'api-url': { type: 'string' },
      ...json,
    },
    run: async ({ values: v }, deps, io) => {
      const shop = await shopById(deps, required(v, 'shop'));
      const apiUrl = typeof v['api-url'] === 'string' ? v['api-url'] : io.apiUrl;
      if (!apiUrl) throw new UsageError("--api-url is required: the stack's outputs name no ApiUrl");
      const session = await portalOpen(deps, shop, {
        readOnly: v['read-only'] === true,
        expiresIn: v['expires-in'],
        mode: v.mode,
        apiUrl,
      }).catch((err: unknown) => {
        throw err instanceof RangeError ? new UsageError(err.message) : err;
      });
      io.out(
        v.json
          ? JSON.stringify(session)
          : [
              `Portal link for ${shop.name} (${shop.id}), ` +
                `${session.read_only ? 'read-only, ' : ''}until ${session.expires_at}:`,
              session.url,
              `(shown once; to end it early: npm run cli -- portal revoke --shop ${shop.id} --id ${session.id})`,
            ].join('\n'),
      );
    },
  },
  {
    name: 'portal list',
    summary: "list a shop's live portal sessions, newest first (never their tokens)",
    synopsis: '--shop SHOP_ID [--json]',
    details: [
      'Live: not deleted, not expired, and the key that made it (if any) not revoked.',
      'created_by is that key, or null for a link an operator made with portal open.',
      JSON_LINE,
    ],
    options: { shop: { type: 'string' }, ...json },
    run: async ({ values: v }, deps, io) => {
      const shop = await shopById(deps, required(v, 'shop'));
      const sessions = await portalList(deps, shop.id);
      if (v.json) return io.out(JSON.stringify(sessions));
      if (sessions.length === 0) return io.out(`Shop ${shop.id} has no live portal sessions.`);
      io.out(
        sessions
          .map(
            (s) =>
              `${s.id}  ${s.read_only ? 'read-only' : 'full'}  until ${s.expires_at}  created ` +
              `${s.created_at} by ${s.created_by ?? 'an operator'}`,
          )
          .join('\n'),
      );
    },
  },
  {
    name: 'portal revoke',
    summary: "end a shop's portal session at once, or all of them (their links stop working)",
    synopsis: '--shop SHOP_ID (--id PS_ID | --all) [--json]',
    details: [
      '--id         the session to end (as DELETE /v1/portal-sessions/{id})',
      '--all        every live session of the shop (e.g. when a link leaked and it is not known which)',
      JSON_LINE,
    ],
    options: { shop: { type: 'string' }, id: { type: 'string' }, all: { type: 'boolean' }, ...json },
    run: async ({ values: v }, deps, io) => {
      const shop = await shopById(deps, required(v, 'shop'));
      if ((v.id !== undefined) === (v.all === true)) throw new UsageError('Name one session with --id, or pass --all');
      const ended = await portalRevoke(deps, shop.id, v.all === true ? 'all' : { id: required(v, 'id') }).catch(
        (err: unknown) => {
          throw err instanceof RangeError ? new UsageError(err.message) : err;
        },
      );
      if (v.json) return io.out(JSON.stringify({ shop_id: shop.id, revoked: ended }));
      io.out(
        ended.length === 0
          ? `Shop ${shop.id} had no live portal sessions.`
          : ended.map((id) => `Revoked portal session ${id}`).join('\n'),
      );
    },
  },
  {
    name: 'call simulate',
    summary: 'record finished calls as the voice platform would (transcript, summary, jobs, events)',
    synopsis: '--shop SHOP_ID [--count N] [--with-job] [--emergency] [--json]',
    details: [
      '--count      how many calls, 1 to 1000 (default 1), a few minutes apart',
      '--with-job   each call creates a routine job',
      '--emergency  each call creates an emergency job',
      JSON_LINE,
    ],
    options: {
      shop: { type: 'string' },
      count: { type: 'string' },
      'with-job': { type: 'boolean' },
      emergency: { type: 'boolean' },
      ...json,
    },
    run: async ({ values: v }, deps, io) => {
      const shop = await shopById(deps, required(v, 'shop'));
      const count = Number(v.count ?? '1');
      if (!Number.isInteger(count) || count < 1 || count > 1000)
        throw new UsageError('--count must be an integer from 1 to 1000');
      const results = [];
      const start = deps.now().getTime();
      for (let i = 0; i < count; i++) {
        // Spaced in time like a real day of calls, oldest first, so ids and times agree.
        const endedAt = new Date(start - (count - 1 - i) * 180_000);
        const call = simulatedCall(shop, {
          withJob: v['with-job'] === true || v.emergency === true,
          emergency: v.emergency === true,
          endedAt,
        });
        const r = await ingestCall(deps, call);
        results.push({ call_id: r.call_id, job_ids: r.job_ids, event_ids: r.event_ids });
      }
      io.out(
        v.json
          ? JSON.stringify(results)
          : results.map((r) => `${r.call_id}${r.job_ids.length ? ` → ${r.job_ids.join(', ')}` : ''}`).join('\n'),
      );
    },
  },
  {
    name: 'trigger',
    summary: 'emit one event of a type for a shop (default: the demo shop), e.g. for `npm run listen`',
    synopsis: `<${SUBSCRIBABLE_EVENT_TYPES.join('|')}> [--shop SHOP_ID] [--json]`,
    details: [
      'Makes the change that emits the event, through the same code as the real thing:',
      '  call.completed             a simulated finished call without a job',
      '  job.created                a simulated call with a job (also emits call.completed)',
      '  job.approved, job.declined a simulated call with a job, then the decision',
      '  webhook_endpoint.disabled  a fixture endpoint (127.0.0.1:9) disabled as on a 410 answer',
      '--shop       the shop (default: the oldest shop, the one `npm start` seeded)',
      JSON_LINE,
    ],
    options: { shop: { type: 'string' }, ...json },
    positionals: 1,
    run: async ({ values: v, positionals }, deps, io) => {
      const type = positionals[0];
      if (!type) throw new UsageError(`Name an event type: ${SUBSCRIBABLE_EVENT_TYPES.join(', ')}`);
      if (!isTriggerType(type))
        throw new UsageError(`Unknown event type '${type}'; one of ${SUBSCRIBABLE_EVENT_TYPES.join(', ')}`);
      const shop = await shopOrDemo(deps, v);
      const result = await trigger(deps, shop, type);
      if (v.json) return io.out(JSON.stringify({ type, shop_id: shop.id, ...result }));
      const others = result.event_ids.filter((id) => id !== result.event_id);
      io.out(
        `Triggered ${type} ${result.event_id} for shop ` +
          `${shop.id}${others.length ? ` (also emitted: ${others.join(', ')})` : ''}`,
      );
    },
  },
  {
    name: 'endpoint list',
    summary: "list a shop's webhook endpoints with their health",
    synopsis: '--shop SHOP_ID [--failing] [--json]',
    details: ['--failing    only endpoints that are failing, disabled or have an open circuit', JSON_LINE],
    options: { shop: { type: 'string' }, failing: { type: 'boolean' }, ...json },
    run: async ({ values: v }, deps, io) => {
      const endpoints = await listShopEndpoints(
        deps,
        (await shopById(deps, required(v, 'shop'))).id,
        v.failing === true,
      );
      if (v.json) return io.out(JSON.stringify(endpoints));
      io.out(
        endpoints.length
          ? endpoints.map(endpointLine).join('\n')
          : v.failing
            ? 'No failing endpoints.'
            : 'No endpoints.',
      );
    },
  },
  {
    name: 'endpoint enable',
    summary: 'enable a webhook endpoint again (clears its failure state, closes its circuit)',
    synopsis: '--shop SHOP_ID --id WE_ID [--json]',
    details: [JSON_LINE],
    options: { shop: { type: 'string' }, id: { type: 'string' }, ...json },
    run: async ({ values: v }, deps, io) => {
      const shopId = (await shopById(deps, required(v, 'shop'))).id;
      const id = required(v, 'id');
      const endpoint = await enableEndpoint(deps, shopId, id);
      if (!endpoint) throw new UsageError(`No such webhook endpoint: ${id}`);
      io.out(v.json ? JSON.stringify(endpoint) : `Enabled ${endpointLine(endpoint)}`);
    },
  },
  {
    name: 'event show',
    summary: 'show an event and its deliveries, with each attempt (status, duration, error, answer)',
    synopsis: 'EVT_ID --shop SHOP_ID [--json]',
    details: [JSON_LINE],
    options: { shop: { type: 'string' }, ...json },
    positionals: 1,
    run: async ({ values: v, positionals }, deps, io) => {
      const shopId = (await shopById(deps, required(v, 'shop'))).id;
      const id = positionals[0];
      if (!id) throw new UsageError('event show takes exactly one event id');
      const event = await showEvent(deps, shopId, id);
      if (!event) throw new UsageError(`No such event: ${id}`);
      io.out(v.json ? JSON.stringify(event) : eventLines(event).join('\n'));
    },
  },
];

const PROGRAM = 'npm run cli --';

function commandHelp(c: CommandSpec): string {
  return [
    `Usage: ${PROGRAM} ${c.name} ${c.synopsis}`,
    '',
    `${c.summary[0]?.toUpperCase()}${c.summary.slice(1)}.`,
    ...(c.details?.length ? ['', ...c.details.map((d) => `  ${d}`)] : []),
    '',
    '  -h, --help   show this help',
  ].join('\n');
}

function listing(commands: CommandSpec[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n');
}

export const USAGE = `Usage: ${PROGRAM} <command> [options]

Commands:
${listing(COMMANDS)}

Help on one command: ${PROGRAM} <command> --help
Exit codes: 0 done, 1 failed (e.g. the table could not be reached), 2 bad usage or input (nothing changed).
Without --stack: the local stack that npm start runs, found in .local/stack.json (LOCAL_STACK_FILE)
whatever its ports; DYNAMODB_ENDPOINT and TABLE_NAME override it.
Against a deployed stack: ${PROGRAM} --stack NAME <command> (reads its table, Region and key from
cdk-outputs.json, or --outputs FILE; needs AWS credentials only).`;

const isHelp = (arg: string | undefined) => arg === '--help' || arg === '-h';

/** The command named by the first words of argv (the longest name wins), and the rest. */
function lookup(argv: string[]): { command: CommandSpec; rest: string[] } | null {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(' ');
    const command = COMMANDS.find((c) => c.name === name);
    if (command && argv.length >= words) return { command, rest: argv.slice(words) };
  }
  return null;
}

function parse(command: CommandSpec, args: string[]) {
  try {
    const parsed = parseArgs({
      args,
      options: command.options,
      strict: true,
      allowPositionals: (command.positionals ?? 0) > 0,
    });
    if (parsed.positionals.length > (command.positionals ?? 0))
      throw new Error(`Unexpected argument '${parsed.positionals[command.positionals ?? 0]}'`);
    return { values: parsed.values as Values, positionals: parsed.positionals };
  } catch (err) {
    throw new UsageError(
      `${(err as Error).message.replace(/\. To specify a positional argument.*$/s, '')}. See ` +
        `\`${PROGRAM} ${command.name} --help\`.`,
    );
  }
}

/** Runs one CLI command; returns the process exit code (0 done, 1 failed, 2 bad usage or input). */
export async function runCli(argv: string[], deps: () => Deps, io: Io): Promise<number> {
  const [first] = argv;
  if (!first || first === 'help' || isHelp(first)) {
    // `help shop create` is `shop create --help`.
    const asked = first === 'help' && argv.length > 1 ? lookup(argv.slice(1)) : null;
    if (asked) {
      io.out(commandHelp(asked.command));
      return 0;
    }
    io.out(USAGE);
    return first ? 0 : 2;
  }
  const found = lookup(argv);
  if (!found) {
    // A known group (`shop`, `key`…) without a known verb: list its commands.
    const group = COMMANDS.filter((c) => c.name.startsWith(`${first} `));
    if (group.length > 0 && (argv.length === 1 || isHelp(argv[1]))) {
      const verbs = group.map((c) => c.name.split(' ')[1]).join('|');
      const text =
        `Usage: ${PROGRAM} ${first} <${verbs}> [options]\n\n${listing(group)}\n\n` +
        `Help on one: ${PROGRAM} ${group[0]?.name} --help`;
      if (argv.length === 1) io.err(text);
      else io.out(text);
      return argv.length === 1 ? 2 : 0;
    }
    const tried = argv.slice(0, group.length > 0 ? 2 : 1).join(' ');
    io.err(`Unknown command '${tried}'.\n\n${group.length > 0 ? listing(group) : USAGE}`);
    return 2;
  }
  const { command, rest } = found;
  if (rest.some(isHelp)) {
    io.out(commandHelp(command));
    return 0;
  }
  try {
    await command.run(parse(command, rest), deps(), io);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`Error: ${err.message}`);
      return 2;
    }
    io.err(`Failed: ${io.explain ? io.explain(err) : (err as Error).message}`);
    return 1;
  }
}
