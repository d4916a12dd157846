/**
 * An endpoint with `ordering: "per_resource"` in a benchmark or a crash test: subscribed to
 * job.created and job.approved, on a fault receiver of its own. Each job gets both events,
 * written straight into the table one after the other (a job created and approved moments
 * apart), so a failed job.created holds its job.approved. The checks: every accepted event
 * arrived, and no job.approved reached the receiver before its job.created was answered 2xx.
 */
import { newEvent, type EventRecord } from '../../shared/domain/events';
import type { DeliveryRecord } from '../../shared/delivery/records';
import type { OrderStore } from '../../shared/delivery/resource-order';
import { newId } from '../../shared/ids';
import { stage } from './instrument';
import { startFaultReceiver, type AnswerPolicy, type FaultReceiver } from './fault-receiver';

export interface OrderedJob {
  id: string;
  created: string;
  approved: string;
}

export interface OrderedJobs {
  receiver: FaultReceiver;
  endpointId: string;
  /** Jobs whose two events were both written. */
  accepted: OrderedJob[];
  /** Writes the next job's job.created and job.approved. */
  writeJob(): Promise<void>;
  /** Accepted events never answered 2xx. */
  lost(): string[];
  /** Jobs whose job.approved arrived before their job.created had been answered 2xx. */
  outOfOrder(): string[];
  /** How many of the accepted jobs' deliveries are held now (only jobs whose job.created has not been answered 2xx are looked at). */
  heldNow(): Promise<number>;
}

export interface OrderedJobsTarget {
  shopId: string;
  createEndpoint(body: unknown): Promise<{ status: number; json: unknown }>;
  putEvent(event: EventRecord): Promise<void>;
  rowsOf(eventId: string): Promise<DeliveryRecord[]>;
}

export async function startOrderedJobs(
  target: OrderedJobsTarget,
  name: string,
  policy: AnswerPolicy,
): Promise<OrderedJobs> {
  const receiver = await startFaultReceiver(name, policy);
  const created = await target.createEndpoint({
    url: receiver.url,
    events: ['job.created', 'job.approved'],
    ordering: 'per_resource',
  });
  if (created.status !== 201)
    throw new Error(`could not create the ordered endpoint: ${created.status} ${JSON.stringify(created.json)}`);
  const { id: endpointId, secret } = created.json as { id: string; secret: string };
  receiver.setSecret(secret);
  const accepted: OrderedJob[] = [];
  const firstReceipt = (eventId: string) => receiver.receipts.find((r) => r.eventId === eventId)?.at;
  return {
    receiver,
    endpointId,
    accepted,
    async writeJob() {
      const id = newId('job');
      const createdEvent = newEvent(target.shopId, 'job.created', { id, object: 'job', status: 'pending' }, new Date());
      await target.putEvent(createdEvent);
      const approvedEvent = newEvent(
        target.shopId,
        'job.approved',
        { id, object: 'job', status: 'approved' },
        new Date(),
      );
      await target.putEvent(approvedEvent);
      accepted.push({ id, created: createdEvent.id, approved: approvedEvent.id });
    },
    lost: () => accepted.flatMap((j) => [j.created, j.approved]).filter((e) => !receiver.firstOk.has(e)),
    outOfOrder: () =>
      accepted
        .filter((j) => {
          const approvedAt = firstReceipt(j.approved);
          const createdOk = receiver.firstOk.get(j.created);
          return approvedAt !== undefined && (createdOk === undefined || approvedAt < createdOk);
        })
        .map((j) => j.id),
    async heldNow() {
      const waiting = accepted.filter((j) => !receiver.firstOk.has(j.created));
      const rows = await Promise.all(waiting.map((j) => target.rowsOf(j.approved)));
      return rows.flat().filter((d) => d.endpoint_id === endpointId && d.held_by).length;
    },
  };
}

/**
 * The chains' requests in a stage of their own (`order`), so a request counter on the table's
 * client (./instrument.ts) can tell what ordering costs: every method of the store runs inside it.
 */
export function countedApart(order: OrderStore): void {
  for (const method of ['join', 'leave', 'read', 'hold', 'release'] as const) {
    const inner = order[method].bind(order) as (...args: unknown[]) => Promise<unknown>;
    (order as unknown as Record<string, unknown>)[method] = (...args: unknown[]) =>
      stage.run('order', () => inner(...args));
  }
}
