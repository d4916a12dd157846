import { parseArgs } from 'node:util';
import { issueKey, parseScopes, type KeyMode } from '../../shared/domain/api-keys';
import { createShop, PLANS, toShopResource } from '../../shared/domain/shop';
import { canonicalTimeZone } from '../../shared/domain/shop-schema';
import { ingestCall } from '../../shared/domain/calls';
import { isId } from '../../shared/ids';
import { simulatedCall } from './simulate';
import { enableEndpoint, endpointLine, eventLines, listShopEndpoints, showEvent } from './webhooks';
import type { ApiDeps as Deps } from '../../shared/wiring/api';

export interface Io {
  out(line: string): void;
  err(line: string): void;
}

class UsageError extends Error {}

const USAGE = `Usage: npm run cli -- <command> [options]

  shop create --name NAME --owner-email EMAIL [--timezone ZONE] [--trade TRADE]
              [--phone E164] [--plan starter|pro] [--json]
  key create  --shop SHOP_ID --scopes a,b,...|all [--write] [--mode test|live] [--json]
  key revoke  --key-id KEY_ID [--json]
  call simulate --shop SHOP_ID [--count N] [--with-job] [--emergency] [--json]
  endpoint list   --shop SHOP_ID [--failing] [--json]
  endpoint enable --shop SHOP_ID --id WE_ID [--json]
  event show EVT_ID --shop SHOP_ID [--json]      (its deliveries with their attempt logs)

Environment: DYNAMODB_ENDPOINT (default http://127.0.0.1:8000, as npm start), TABLE_NAME (default shop-calls).
Against AWS: unset DYNAMODB_ENDPOINT=, set AWS_REGION, TABLE_NAME and credentials.`;

type Options = Record<string, { type: 'string' | 'boolean' }>;

function parse(args: string[], options: Options) {
  return parseWith(args, options, false).values;
}

function parseWith(args: string[], options: Options, allowPositionals: boolean) {
  try {
    const parsed = parseArgs({ args, options, strict: true, allowPositionals });
    return { values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

async function requiredShop(deps: Deps, values: Record<string, unknown>): Promise<string> {
  const shopId = required(values, 'shop');
  if (!isId('shop', shopId) || !(await deps.shops.get(shopId))) throw new UsageError(`No such shop: ${shopId}`);
  return shopId;
}

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value.trim();
}

type Command = (args: string[], deps: Deps, io: Io) => Promise<void>;

const commands: Record<string, Command> = {
  'shop create': async (args, deps, io) => {
    const v = parse(args, {
      name: { type: 'string' },
      'owner-email': { type: 'string' },
      timezone: { type: 'string' },
      trade: { type: 'string' },
      phone: { type: 'string' },
      plan: { type: 'string' },
      json: { type: 'boolean' },
    });
    const email = required(v, 'owner-email');
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new UsageError(`--owner-email '${email}' is not an email address`);
    const timezone = typeof v.timezone === 'string' ? canonicalTimeZone(v.timezone) : undefined;
    if (timezone === null) throw new UsageError(`--timezone '${String(v.timezone)}' is not an IANA time zone`);
    const phone = v.phone as string | undefined;
    if (phone !== undefined && !/^\+[1-9]\d{6,14}$/.test(phone)) throw new UsageError(`--phone '${phone}' is not E.164 (+15551234567)`);
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

  'key create': async (args, deps, io) => {
    const v = parse(args, {
      shop: { type: 'string' },
      scopes: { type: 'string' },
      write: { type: 'boolean' },
      mode: { type: 'string' },
      json: { type: 'boolean' },
    });
    const shopId = required(v, 'shop');
    if (!isId('shop', shopId) || !(await deps.shops.get(shopId))) throw new UsageError(`No such shop: ${shopId}`);
    let scopes;
    try {
      scopes = parseScopes(required(v, 'scopes'));
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const mode = (v.mode as string | undefined) ?? 'test';
    if (mode !== 'test' && mode !== 'live') throw new UsageError('--mode must be test or live');
    const { record, key } = await issueKey(deps.apiKeys, { shopId, scopes, write: v.write === true, mode: mode as KeyMode });
    const out = { id: record.id, key, shop_id: shopId, scopes: record.scopes, write: record.write, mode: record.mode };
    io.out(v.json ? JSON.stringify(out) : `Created key ${record.id}: ${key}\n(shown once; only its hash is stored)`);
  },

  'key revoke': async (args, deps, io) => {
    const v = parse(args, { 'key-id': { type: 'string' }, json: { type: 'boolean' } });
    const keyId = required(v, 'key-id');
    const record = isId('key', keyId) ? await deps.apiKeys.revoke(keyId, deps.now().toISOString()) : null;
    if (!record) throw new UsageError(`No such key: ${keyId}`);
    io.out(v.json ? JSON.stringify({ id: record.id, revoked: true, revoked_at: record.revoked_at }) : `Revoked key ${record.id}`);
  },

  'call simulate': async (args, deps, io) => {
    const v = parse(args, {
      shop: { type: 'string' },
      count: { type: 'string' },
      'with-job': { type: 'boolean' },
      emergency: { type: 'boolean' },
      json: { type: 'boolean' },
    });
    const shopId = required(v, 'shop');
    const shop = isId('shop', shopId) ? await deps.shops.get(shopId) : null;
    if (!shop) throw new UsageError(`No such shop: ${shopId}`);
    const count = Number(v.count ?? '1');
    if (!Number.isInteger(count) || count < 1 || count > 1000) throw new UsageError('--count must be an integer from 1 to 1000');
    const results = [];
    const start = deps.now().getTime();
    for (let i = 0; i < count; i++) {
      // Spaced in time like a real day of calls, oldest first, so ids and times agree.
      const endedAt = new Date(start - (count - 1 - i) * 180_000);
      const call = simulatedCall(shop, { withJob: v['with-job'] === true || v.emergency === true, emergency: v.emergency === true, endedAt });
      const r = await ingestCall(deps, call);
      results.push({ call_id: r.call_id, job_ids: r.job_ids, event_ids: r.event_ids });
    }
    io.out(v.json ? JSON.stringify(results) : results.map((r) => `${r.call_id}${r.job_ids.length ? ` → ${r.job_ids.join(', ')}` : ''}`).join('\n'));
  },

  'endpoint list': async (args, deps, io) => {
    const v = parse(args, { shop: { type: 'string' }, failing: { type: 'boolean' }, json: { type: 'boolean' } });
    const endpoints = await listShopEndpoints(deps, await requiredShop(deps, v), v.failing === true);
    if (v.json) io.out(JSON.stringify(endpoints));
    else io.out(endpoints.length ? endpoints.map(endpointLine).join('\n') : v.failing ? 'No failing endpoints.' : 'No endpoints.');
  },

  'endpoint enable': async (args, deps, io) => {
    const v = parse(args, { shop: { type: 'string' }, id: { type: 'string' }, json: { type: 'boolean' } });
    const shopId = await requiredShop(deps, v);
    const id = required(v, 'id');
    const endpoint = await enableEndpoint(deps, shopId, id);
    if (!endpoint) throw new UsageError(`No such webhook endpoint: ${id}`);
    io.out(v.json ? JSON.stringify(endpoint) : `Enabled ${endpointLine(endpoint)}`);
  },

  'event show': async (args, deps, io) => {
    const { values: v, positionals } = parseWith(args, { shop: { type: 'string' }, json: { type: 'boolean' } }, true);
    const shopId = await requiredShop(deps, v);
    const [id, ...extra] = positionals;
    if (!id || extra.length > 0) throw new UsageError('event show takes exactly one event id');
    const event = await showEvent(deps, shopId, id);
    if (!event) throw new UsageError(`No such event: ${id}`);
    io.out(v.json ? JSON.stringify(event) : eventLines(event).join('\n'));
  },
};

/** Runs one CLI command; returns the process exit code (0 ok, 2 usage or input error, 1 failure). */
export async function runCli(argv: string[], deps: () => Deps, io: Io): Promise<number> {
  const [noun, verb, ...rest] = argv;
  if (!noun || noun === 'help' || noun === '--help' || noun === '-h') {
    io.out(USAGE);
    return noun ? 0 : 2;
  }
  const command = commands[`${noun} ${verb ?? ''}`];
  if (!command) {
    io.err(`Unknown command '${[noun, verb].filter(Boolean).join(' ')}'.\n\n${USAGE}`);
    return 2;
  }
  try {
    await command(rest, deps(), io);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`Error: ${err.message}`);
      return 2;
    }
    io.err(`Failed: ${(err as Error).message}`);
    return 1;
  }
}
