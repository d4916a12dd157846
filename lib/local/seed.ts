import { simulatedCall } from '../cli/simulate';
import { issueKey, type ApiKeyStore } from '../../shared/domain/api-keys';
import { ingestCall, type CallDeps } from '../../shared/domain/calls';
import { approveJob, declineJob, type JobDeps } from '../../shared/domain/jobs';
import { createShop, type Shop, type ShopStore } from '../../shared/domain/shop';
import { SCOPES } from '../../shared/domain/scopes';

export interface DemoSeed {
  shop: Shop;
  writeKey: { id: string; key: string };
  readKey: { id: string; key: string };
  /** What seedDemoData recorded; absent when the stack was started without demo data. */
  data?: DemoData;
}

export interface DemoData {
  calls: number;
  jobs: { pending: number; approved: number; declined: number };
  events: number;
}

/** A demo shop with a full write key and a read-only key (every scope, no writes). */
export async function seedDemo(deps: { shops: ShopStore; apiKeys: ApiKeyStore }): Promise<DemoSeed> {
  const shop = await createShop(deps, { name: 'Demo Plumbing Co', owner_email: 'owner@demo-plumbing.test' });
  const write = await issueKey(deps.apiKeys, { shopId: shop.id, scopes: [...SCOPES], write: true, mode: 'test' });
  const read = await issueKey(deps.apiKeys, { shopId: shop.id, scopes: [...SCOPES], write: false, mode: 'test' });
  return {
    shop,
    writeKey: { id: write.record.id, key: write.key },
    readKey: { id: read.record.id, key: read.key },
  };
}

/** The demo day, oldest first: which calls ended how long ago, and what became of their jobs. */
const DEMO_CALLS: { hoursAgo: number; withJob: boolean; emergency: boolean; decision?: 'approve' | 'decline' }[] = [
  { hoursAgo: 50, withJob: true, emergency: false, decision: 'approve' },
  { hoursAgo: 47, withJob: false, emergency: false },
  { hoursAgo: 30, withJob: true, emergency: false, decision: 'decline' },
  { hoursAgo: 26, withJob: true, emergency: true, decision: 'approve' },
  { hoursAgo: 20, withJob: false, emergency: false },
  { hoursAgo: 5, withJob: true, emergency: false },
  { hoursAgo: 2, withJob: false, emergency: false },
  { hoursAgo: 1, withJob: true, emergency: false },
];

/**
 * A few days of the demo shop's calls, with transcripts, summaries, jobs in several statuses
 * and their events. Written through the same domain code as real calls (ingest, approve,
 * decline), so the API shows them like any other. Seeded before any webhook endpoint exists:
 * nothing is delivered.
 */
export async function seedDemoData(deps: CallDeps & JobDeps, shop: Shop): Promise<DemoData> {
  const data: DemoData = { calls: 0, jobs: { pending: 0, approved: 0, declined: 0 }, events: 0 };
  const now = deps.now().getTime();
  for (const c of DEMO_CALLS) {
    const result = await ingestCall(
      deps,
      simulatedCall(shop, {
        withJob: c.withJob,
        emergency: c.emergency,
        endedAt: new Date(now - c.hoursAgo * 3_600_000),
      }),
    );
    data.calls++;
    data.events += result.event_ids.length;
    for (const jobId of result.job_ids) {
      if (c.decision === 'approve') await approveJob(deps, shop.id, jobId, { version: 1 });
      if (c.decision === 'decline')
        await declineJob(deps, shop.id, jobId, { version: 1, reason: 'Outside our service area' });
      if (c.decision) data.events++;
      data.jobs[c.decision === 'approve' ? 'approved' : c.decision === 'decline' ? 'declined' : 'pending']++;
    }
  }
  return data;
}
