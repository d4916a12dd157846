import './lib/quiet';
import { startPipelineEnv } from './lib/pipeline-env';
import { treeCpuMs } from './lib/cpu';
import { createShop } from '../shared/domain/shop';
import { createEndpoint } from '../shared/domain/webhook-endpoints';
import { newEvent } from '../shared/domain/events';
import { newDelivery, type DeliveryRecord } from '../shared/domain/deliveries';
import { newId } from '../shared/ids';
import { DynamoDeliveryStore, recordAttemptInput } from '../shared/store/deliveries';
import { keys } from '../shared/store/keys';
import { statsAddInput } from '../shared/store/endpoint-stats';

const env = await startPipelineEnv();
const db = env.deps.db;
const T = db.tableName;
const shop = await createShop(env.deps, { name: 'S', owner_email: 'a@b.test' });
const ep = (await createEndpoint(env.deps, shop.id, { url: 'http://127.0.0.1:9/x', events: ['call.completed'], description: null } as never)) as { id: string };
const store = new DynamoDeliveryStore(db);
const now = new Date();
const mk = (n: number) => { const rows: DeliveryRecord[] = []; for (let i = 0; i < n; i++) rows.push(newDelivery(newEvent(shop.id, 'call.completed', { id: `c${i}`, object: 'call' }, now), ep.id, newId('dlv', now.getTime()), 'fanout', now)); return rows; };
const N = Number(process.env.N ?? 1000);
const rows = mk(N * 3);
for (let i = 0; i < rows.length; i += 25) await store.createAll(rows.slice(i, i + 25));
const upd = (d: DeliveryRecord) => recordAttemptInput(d, { status: 'succeeded', attempts: 1, last_attempt_at: now.toISOString(), next_attempt_at: null, sweep_at: null, last_response_status: 204, last_error: null, entry: { attempt: 1, at: now.toISOString(), status: 204, duration_ms: 3, error: null, response_snippet: null } });
const measure = async (name: string, count: number, perOp: number, fn: (i: number) => Promise<unknown>, conc = 8) => {
  for (let i = 0; i < 50; i++) await fn(i % count); // warm (repeats fail conditions; fine)
  const c0 = treeCpuMs(env.dynamodb.pid) as number; const t0 = performance.now();
  let next = 0; await Promise.all(Array.from({ length: conc }, async () => { while (next < count) await fn(next++).catch(() => undefined); }));
  const c1 = treeCpuMs(env.dynamodb.pid) as number;
  console.log(`${name.padEnd(44)} ${((c1 - c0) / count).toFixed(2).padStart(6)} ms JVM CPU/op  ${(((c1 - c0) / count) / perOp).toFixed(2).padStart(6)} per item   wall ${((performance.now() - t0) / count).toFixed(2)} ms/op`);
};
let base = 0;
const part = (k: number) => rows.slice(k * N, (k + 1) * N);
await measure('row UpdateItem (recordAttempt)', N, 1, (i) => db.doc.update({ TableName: T, ...upd(part(0)[i] as DeliveryRecord) }));
await measure('GetItem row', N, 1, (i) => db.doc.get({ TableName: T, Key: keys.delivery(shop.id, (part(0)[i] as DeliveryRecord).event_id, (part(0)[i] as DeliveryRecord).id), ConsistentRead: true }));
await measure('BatchGet 10 rows + endpoint', N / 10, 11, (i) => db.doc.batchGet({ RequestItems: { [T]: { ConsistentRead: true, Keys: [...part(0).slice(i * 10, i * 10 + 10).map((d) => keys.delivery(shop.id, d.event_id, d.id)), keys.webhookEndpoint(shop.id, ep.id)] } } }));
await measure('endpoint UpdateItem (SET x)', N / 10, 1, (i) => db.doc.update({ TableName: T, Key: keys.webhookEndpoint(shop.id, ep.id), UpdateExpression: 'SET x = :x', ExpressionAttributeValues: { ':x': i } }), 1);
await measure('stats UpdateItem (ADD)', N / 10, 1, () => db.doc.update({ TableName: T, ...statsAddInput(shop.id, ep.id, now.toISOString(), { attempts: 1, succeeded: 1, failed: 0, deliveries_failed: 0, latency: { 3: 1 } } as never) }), 1);
await measure('Txn: row + endpoint + stats', N / 10, 3, (i) => db.doc.transactWrite({ TransactItems: [
  { Update: { TableName: T, ...upd(part(1)[i] as DeliveryRecord) } },
  { Update: { TableName: T, Key: keys.webhookEndpoint(shop.id, ep.id), UpdateExpression: 'SET y = :x', ExpressionAttributeValues: { ':x': i } } },
  { Update: { TableName: T, ...statsAddInput(shop.id, ep.id, now.toISOString(), { attempts: 1, succeeded: 1, failed: 0, deliveries_failed: 0, latency: { 3: 1 } } as never) } },
] }), 1);
await measure('Txn: row only', N / 10, 1, (i) => db.doc.transactWrite({ TransactItems: [{ Update: { TableName: T, ...upd(part(2)[i] as DeliveryRecord) } }] }), 1);
void base;
await env.close();
