import type { Sender, SendResult } from '../shared/delivery/sender';
import type { Steps } from './steps';

/** How a receiver answers, drawn per endpoint from the seed. */
export type Behaviour = 'healthy' | 'flaky' | 'down-then-back' | 'gone-later' | 'slow';
export const BEHAVIOURS: readonly Behaviour[] = ['healthy', 'flaky', 'down-then-back', 'gone-later', 'slow'];

/** One request a receiver got (read whole), and what it answered. */
export interface Receipt {
  seq: number;
  endpoint: string;
  eventId: string;
  type: string;
  resource: string;
  /** Sim time the request arrived. */
  at: number;
  /** What the receiver answered; null when the connection broke after it read the body. */
  status: number | null;
  /** Sim time the sender had the answer (undefined: it never did, its invocation was killed). */
  answeredAt?: number;
}

interface Receiver {
  behaviour: Behaviour;
  /** Sim time from which a down receiver is back, or a gone one answers 410. */
  turnAt: number;
  inFlight: number;
  maxInFlight: number;
}

/**
 * The receivers of a run, behind the engine's Sender port: each request takes sim time, may
 * hang to the timeout, break after the body was read, or answer 2xx, 4xx, 5xx, 410 or 429 with
 * Retry-After. Every request that reached a receiver is in `receipts`.
 */
export class Receivers implements Sender {
  readonly receipts: Receipt[] = [];
  private readonly receivers = new Map<string, Receiver>();
  /** From the drain on, every receiver is back and answers 200 (a gone one keeps answering 410). */
  healed = false;

  constructor(
    private readonly steps: Steps,
    private readonly timeoutMs: number,
  ) {}

  /** The URL an endpoint of this behaviour is created with; its path names the receiver. */
  add(name: string, behaviour: Behaviour, turnAt: number): string {
    this.receivers.set(name, { behaviour, turnAt, inFlight: 0, maxInFlight: 0 });
    return `http://127.0.0.1:9/${name}`;
  }

  maxInFlight(name: string): number {
    return this.receivers.get(name)?.maxInFlight ?? 0;
  }

  async post(url: URL, headers: Record<string, string>, body: string): Promise<SendResult> {
    const name = url.pathname.slice(1);
    const receiver = this.receivers.get(name);
    await this.steps.gate(`POST ${name} ${headers['webhook-id']}`);
    if (!receiver) return fail('ECONNREFUSED: connect ECONNREFUSED', 1);
    const answer = this.answer(receiver);
    const event = JSON.parse(body) as { id: string; type: string; data: { id: string } };
    receiver.inFlight++;
    receiver.maxInFlight = Math.max(receiver.maxInFlight, receiver.inFlight);
    const receipt: Receipt = {
      seq: this.receipts.length,
      endpoint: name,
      eventId: event.id,
      type: event.type,
      resource: event.data.id,
      at: this.steps.clock.now(),
      status: answer.status,
    };
    this.receipts.push(receipt);
    this.steps.log(`${name} got ${event.type} ${event.id}: ${answer.status ?? answer.error}`);
    // A killed sender's connection closes: the request ends for the receiver too.
    let open = true;
    const end = () => {
      if (open) receiver.inFlight--;
      open = false;
    };
    this.steps.invocation()?.onKill.push(end);
    try {
      await this.steps.clock.sleep(answer.ms, `${name} answers`);
      await this.steps.gate(`answer of ${name} ${event.id}`);
      receipt.answeredAt = this.steps.clock.now();
    } finally {
      end();
    }
    return {
      status: answer.status,
      error: answer.error,
      retryAfterMs: answer.retryAfterMs,
      durationMs: answer.ms,
      snippet: answer.status === null ? null : 'ok',
    };
  }

  private answer(r: Receiver): {
    status: number | null;
    error: string | null;
    retryAfterMs: number | null;
    ms: number;
  } {
    const rng = this.steps.rng;
    const ok = { status: 200, error: null, retryAfterMs: null, ms: rng.int(1, 40) };
    const now = this.steps.clock.now();
    if (r.behaviour === 'gone-later' && now >= r.turnAt) return { ...ok, status: 410 };
    if (this.healed) return ok;
    switch (r.behaviour) {
      case 'healthy':
      case 'gone-later':
        return ok;
      case 'slow':
        return { ...ok, ms: rng.int(500, 9_000) };
      case 'down-then-back':
        return now >= r.turnAt ? ok : { ...ok, status: rng.pick([500, 502, 503]) };
      case 'flaky': {
        const roll = rng.int(0, 99);
        if (roll < 60) return ok;
        if (roll < 72) return { ...ok, status: 500 };
        if (roll < 78) return { ...ok, status: 400 };
        if (roll < 86) return { ...ok, status: 429, retryAfterMs: rng.int(1, 30) * 1000 };
        if (roll < 93)
          return { status: null, error: `timeout after ${this.timeoutMs} ms`, retryAfterMs: null, ms: this.timeoutMs };
        return { status: null, error: 'ECONNRESET: socket hang up', retryAfterMs: null, ms: rng.int(1, 40) };
      }
    }
  }
}

const fail = (error: string, ms: number): SendResult => ({
  status: null,
  error,
  retryAfterMs: null,
  durationMs: ms,
  snippet: null,
});
