import { MAX_IN_FLIGHT } from './circuit';
import type { DeliveryMessage, DeliveryRecord } from './records';
import type { AttemptDeps, AttemptInputs } from './ports';
import { awaitAdmissions, newBatchContext, newRunway, settlePulled, type BatchContext, type Due } from './runway';
import { isOpenStatus } from './status';
import { Verdicts, type AttemptVerdict } from './attempt-verdict';
import { admitOn, runOf, type Admitted } from './admit-endpoint';
import { planEndpoint, type Action, type EndpointPlan, type Source } from './endpoint-plan';
import { attempt } from './send-attempt';
import { afterLease, cancel, defer, recordNotSent, waitForRate } from './put-off';
import type { EndpointRecord } from '../domain/webhook-endpoints';

/**
 * One batch of queue messages (svix's worker, in stages): read every row, event and
 * endpoint in one request; per endpoint, admit what its in-flight limit, circuit and rate
 * allow (one conditional write), plan one action per delivery (./endpoint-plan.ts) and carry
 * it out: send, record and release each admitted delivery (./send-attempt.ts), and put the
 * rest off (./put-off.ts). A slot freed by a success passes on to the endpoint's next due
 * delivery with no endpoint write (a run: ./runway.ts): one of this batch, or, when
 * deliveries wait on the queue for a slot, one pulled from the table. No delivery waits on
 * another endpoint's receiver. The row is the truth: every change is conditional on its
 * attempt count, so a duplicate message sends nothing. `endsAt`: when the invocation is cut
 * off (epoch ms), which no request outlasts.
 */
export async function deliverBatch(
  deps: AttemptDeps,
  messages: DeliveryMessage[],
  endsAt = Infinity,
): Promise<PromiseSettledResult<AttemptVerdict>[]> {
  const inputs = await deps.deliveries.readForAttempts(messages);
  const ctx = newBatchContext(deps.now().getTime(), endsAt);
  ctx.pull = (endpoint) =>
    ctx.pulled.push(Date.now() < ctx.deadline ? pullDue(deps, endpoint, ctx) : requeueDue(deps, endpoint, ctx));
  const groups = new Map<string, { endpoint: EndpointRecord | null; due: Due[] }>();
  const early = messages.map((message): AttemptVerdict | Due => {
    const read = readDue(inputs, message);
    if (read === 'missing') return read;
    if (read === 'duplicate' || ctx.taken.has(read.delivery.id)) return 'duplicate';
    const { delivery } = read;
    ctx.taken.add(delivery.id);
    const key = `${delivery.shop_id}/${delivery.endpoint_id}`;
    const endpoint = inputs.endpoint(message);
    const group = groups.get(key) ?? { endpoint: endpoint?.id === delivery.endpoint_id ? endpoint : null, due: [] };
    group.due.push(read);
    groups.set(key, group);
    return read;
  });
  const byDelivery = new Map<string, Promise<AttemptVerdict>>();
  awaitAdmissions(ctx, groups.size);
  for (const { endpoint, due } of groups.values()) {
    const settled = forEndpoint(deps, { read: endpoint, due, ctx, source: 'queue' });
    for (const d of due)
      byDelivery.set(
        d.delivery.id,
        settled.then((v) => v.get(d.delivery.id) as Promise<AttemptVerdict>),
      );
  }
  const results = await Promise.allSettled(
    early.map((e) =>
      typeof e === 'string' ? Promise.resolve(e) : (byDelivery.get(e.delivery.id) as Promise<AttemptVerdict>),
    ),
  );
  await settlePulled(ctx);
  return results;
}

const isOpen = (d: DeliveryRecord) => isOpenStatus(d.status);

/** A message's row and event as read: gone, already past this attempt (or ended), or due. */
function readDue(inputs: AttemptInputs, message: DeliveryMessage): Due | 'missing' | 'duplicate' {
  const delivery = inputs.delivery(message);
  const event = inputs.event(message);
  if (!delivery || !event) return 'missing';
  // A held row waits for an earlier delivery of its resource (./resource-order.ts): a message for it sends nothing.
  return isOpen(delivery) && delivery.attempts < message.attempt && !delivery.held_by
    ? { message, delivery, event }
    : 'duplicate';
}

/**
 * One endpoint's due deliveries in a batch, as read (`read` null: the batch's read missed it), and
 * where they came from.
 */
interface EndpointBatch {
  read: EndpointRecord | null;
  due: Due[];
  ctx: BatchContext;
  source: Source;
}

/**
 * One endpoint's due deliveries, in stages: admit them (one conditional write), plan one
 * action per delivery (pure), carry the plan out.
 */
async function forEndpoint(deps: AttemptDeps, batch: EndpointBatch): Promise<Verdicts> {
  const { due, ctx, source } = batch;
  const now = deps.now();
  let admitted: Admitted | null;
  try {
    const first = due[0] as Due;
    const endpoint = batch.read ?? (await deps.endpoints.get(first.delivery.shop_id, first.delivery.endpoint_id));
    admitted = endpoint?.enabled ? await admitOn(deps, endpoint, due, source) : null;
  } finally {
    // The queue's endpoints count down the batch's admissions (`admissions` in ./runway.ts).
    if (source === 'queue') ctx.admitted();
  }
  const backlogMarked = admitted?.endpoint.backlog_at !== undefined;
  const plan = planEndpoint(
    due.map((d) => d.delivery.id),
    admitted && { admission: admitted.admission, backlogMarked },
    source,
  );
  // Behind requests that look stuck too: their messages wait until the first lease ends, but a success
  // (the receiver was only slow) takes the mark and pulls them at once; a hanging receiver never does.
  const marked =
    admitted && plan.markBacklog
      ? deps.endpoints.markBacklog(admitted.endpoint, now.toISOString()).catch(() => undefined)
      : undefined;
  const verdicts = carryOut(deps, { batch, plan, admitted, now });
  await marked;
  return verdicts;
}

/**
 * A pulled delivery this batch does not take after all: it stays due on its row, and its own
 * message or the sweeper wakes it.
 */
const LEFT_DUE: Promise<AttemptVerdict> = Promise.resolve('left_due');

/** Carries out an endpoint's plan: one switch over its actions. */
function carryOut(
  deps: AttemptDeps,
  { batch, plan, admitted, now }: { batch: EndpointBatch; plan: EndpointPlan; admitted: Admitted | null; now: Date },
): Verdicts {
  const { due, ctx, source } = batch;
  const find = (id: string) => due.find((d) => d.delivery.id === id) as Due;
  // What sends nothing waits until the batch's admissions are written: the requests behind them go first.
  const later = (write: () => Promise<AttemptVerdict>) => ctx.admissions.then(write);
  const admission = admitted?.admission;
  // What the admission carried waits for a slot this batch's runs free, or goes back as it came.
  const runway =
    admission &&
    newRunway<AttemptVerdict>({
      ctx,
      waiting: admission.carry.map(find),
      carryUntil: admission.carryUntil,
      source,
      giveBack: (d) => (source === 'table' ? LEFT_DUE : defer(deps, d, deps.now(), null)),
      runs: admission.send.length,
    });
  const perform = (action: Action, d: Due): Promise<AttemptVerdict> => {
    switch (action.kind) {
      case 'send': {
        if (!admitted || !admission || !runway) throw new Error('a send without an admission');
        const run = runOf(action.deliveryId, action.lease, admitted.endpoint, admitted.grace);
        return attempt(deps, { endpoint: admitted.endpoint, health: admission.health, due: d, run, runway });
      }
      case 'wait-in-run':
        if (!runway) throw new Error('a wait in a run without an admission');
        return runway.verdict(action.deliveryId);
      case 'record-not-sent':
        return later(() => recordNotSent(deps, d, now));
      case 'defer':
        return later(() => defer(deps, d, now, action.until));
      case 'wait-for-rate':
        return later(() => waitForRate(deps, d, action.at));
      case 'in-flight':
        return later(() => afterLease(deps, d, now, action.until));
      case 'cancel':
        return later(() => cancel(deps, d.delivery));
      case 'leave-due':
        return LEFT_DUE;
    }
  };
  const verdicts = new Verdicts();
  for (const action of plan.actions) verdicts.set(action.deliveryId, perform(action, find(action.deliveryId)));
  return verdicts;
}

/** Due deliveries read from the table at a time. */
const PULL_PAGE = 8;

/** An endpoint's due rows, oldest first: a page, and the in-flight limit's worth more that others may hold. */
const listDue = (deps: AttemptDeps, endpoint: EndpointRecord) =>
  deps.deliveries.listDueForEndpoint(endpoint.shop_id, endpoint.id, deps.now(), PULL_PAGE + MAX_IN_FLIGHT);

/**
 * The batch's `pull` (./runway.ts), while its runway lasts: read an endpoint's due ones
 * from the table (oldest first) and attempt them in this batch, at the endpoint's limit.
 * Whatever goes wrong, the rows keep their own wake-ups (queue message, schedule, sweeper).
 */
async function pullDue(deps: AttemptDeps, endpoint: EndpointRecord, ctx: BatchContext): Promise<void> {
  try {
    const listed = await listDue(deps, endpoint);
    const found = listed.filter((m) => !ctx.taken.has(m.delivery_id)).slice(0, PULL_PAGE);
    if (found.length === 0) return;
    found.forEach((m) => ctx.taken.add(m.delivery_id));
    const inputs = await deps.deliveries.readForAttempts(found);
    // An ordered row never attempted goes out only once its chain admits it (./resource-order.ts),
    // with its own message.
    const due = found
      .map((message) => readDue(inputs, message))
      .filter((d): d is Due => typeof d !== 'string' && !(d.delivery.order_key && d.delivery.attempts === 0));
    const current = inputs.endpoint(found[0] as DeliveryMessage);
    if (due.length === 0 || !current) return;
    await Promise.allSettled((await forEndpoint(deps, { read: current, due, ctx, source: 'table' })).values());
  } catch {
    // Nothing lost: see above.
  }
}

/**
 * A success past its batch's runway found deliveries waiting for a slot: it does not pull them
 * (the invocation would outlast its runway), but sends a page of them to the queue, due now, so
 * a batch takes them at once instead of at their deferral's end (up to a lease's 15 s behind
 * requests that looked stuck). A full page leaves the mark on for the next success. Their older
 * messages find the attempt done and send nothing; whatever fails, the rows keep their wake-ups.
 */
async function requeueDue(deps: AttemptDeps, endpoint: EndpointRecord, ctx: BatchContext): Promise<void> {
  try {
    const listed = await listDue(deps, endpoint);
    const due = listed.filter((m) => !ctx.taken.has(m.delivery_id));
    if (due.length === 0) return;
    await deps.queue.send(due);
    if (listed.length === PULL_PAGE + MAX_IN_FLIGHT)
      await deps.endpoints.markBacklog(endpoint, deps.now().toISOString());
  } catch {
    // Nothing lost: see above.
  }
}
