import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { Webhook } from 'standardwebhooks';

/** What a receiver does with one verified request: answer with this status (after `delayMs`), or never answer. */
export type Answer = number | { status: number; delayMs: number } | 'hang';

/** Decides the answer from the event id and how many requests of that event came before (0 for the first). */
export type AnswerPolicy = (eventId: string, previous: number) => Answer;

export interface Receipt {
  eventId: string;
  /** `performance.now()` when the request had been read and verified. */
  at: number;
  answer: Answer;
}

export interface FaultReceiver {
  name: string;
  url: string;
  setSecret(secret: string): void;
  /** Every request that arrived, verified or not. */
  requests: number;
  /** Requests whose signature did not verify (401). */
  rejected: number;
  /** Verified requests, in arrival order. */
  receipts: Receipt[];
  /** First 2xx answer per event: when it was received. */
  firstOk: Map<string, number>;
  /** Called after each verified request that is answered 2xx. */
  onOk: (eventId: string, at: number) => void;
  /** Requests that arrived after their event had already been answered 2xx (at-least-once duplicates). */
  duplicates(): number;
  close(): Promise<void>;
}

const isOk = (a: Answer): boolean =>
  a !== 'hang' && (typeof a === 'number' ? a : a.status) < 300 && (typeof a === 'number' ? a : a.status) >= 200;

export const answers = {
  ok:
    (delayMs = 0): AnswerPolicy =>
    () =>
      delayMs > 0 ? { status: 204, delayMs } : 204,
  status:
    (status: number): AnswerPolicy =>
    () =>
      status,
  hang: (): AnswerPolicy => () => 'hang',
  /**
   * 500 to the first `failFirst` requests of each event, then 204, but never more than
   * `maxStreak` failures in a row across events: an intermittently failing receiver that
   * never looks dead (a circuit breaker that opens after 5 consecutive failures stays
   * closed), so the retries it causes are plain retries on the schedule.
   */
  flaky: (failFirst = 2, maxStreak = 2): AnswerPolicy => {
    let streak = 0;
    return (_eventId, previous) => {
      if (previous < failFirst && streak < maxStreak) {
        streak++;
        return 500;
      }
      streak = 0;
      return 204;
    };
  },
};

const open = new Set<FaultReceiver>();

/** Closes every fault receiver still open (for afterAll / finally). */
export async function closeFaultReceivers(): Promise<void> {
  await Promise.all([...open].map((r) => r.close()));
}

/**
 * A loopback webhook receiver that verifies every request with standardwebhooks (raw body,
 * the three headers) and answers as `policy` says: a status, a status after a delay, or
 * never (a hung receiver; its sockets are dropped on close()).
 */
export async function startFaultReceiver(name: string, policy: AnswerPolicy): Promise<FaultReceiver> {
  let verifier: Webhook | undefined;
  const perEvent = new Map<string, number>();
  const receiver: FaultReceiver = {
    name,
    url: '',
    setSecret: (secret) => {
      verifier = new Webhook(secret);
    },
    requests: 0,
    rejected: 0,
    receipts: [],
    firstOk: new Map(),
    onOk: () => undefined,
    duplicates: () => {
      let n = 0;
      for (const r of receiver.receipts) {
        const first = receiver.firstOk.get(r.eventId);
        if (first !== undefined && r.at > first) n++;
      }
      return n;
    },
    close: async () => undefined,
  };
  const timers = new Set<NodeJS.Timeout>();
  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    receiver.requests++;
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    let eventId: string;
    try {
      if (!verifier) throw new Error('no secret yet');
      eventId = (verifier.verify(raw, headers) as { id: string }).id;
      if (headers['webhook-id'] !== eventId) throw new Error('webhook-id is not the event id');
    } catch {
      receiver.rejected++;
      res.writeHead(401).end();
      return;
    }
    const at = performance.now();
    const previous = perEvent.get(eventId) ?? 0;
    perEvent.set(eventId, previous + 1);
    const answer = policy(eventId, previous);
    receiver.receipts.push({ eventId, at, answer });
    if (answer === 'hang') return;
    if (isOk(answer) && !receiver.firstOk.has(eventId)) {
      receiver.firstOk.set(eventId, at);
      receiver.onOk(eventId, at);
    }
    if (typeof answer === 'number') {
      res.writeHead(answer).end();
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      res.writeHead(answer.status).end();
    }, answer.delayMs);
    timers.add(timer);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  receiver.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  receiver.close = async () => {
    if (!open.delete(receiver)) return;
    for (const t of timers) clearTimeout(t);
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  };
  open.add(receiver);
  return receiver;
}
