import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withoutEvent, type DeliveryMessage, type DeliveryQueue } from '../../shared/delivery/records';
import type { RetryScheduler } from '../../shared/delivery/ports';
import { SQS_MAX_DELAY_MS } from '../../shared/delivery/aws/sqs-queue';
import type { Mail, Mailer } from '../../shared/domain/notifications';
import { logger } from '../../shared/logger';
import type { ChaosDraws } from './chaos';

/**
 * The local stack's stand-ins for EventBridge Scheduler and SES. It passes them to the
 * pipeline's wiring (./wiring.ts); no Lambda bundle holds them.
 */

/**
 * EventBridge Scheduler and SQS delays locally: a timer that puts the message on the local
 * queue, to the millisecond. A timer dies with the process; the row does not, and the
 * sweeper sends what a lost timer would have.
 */
export class LocalRetryScheduler implements RetryScheduler {
  private static readonly timers = new Set<NodeJS.Timeout>();

  /**
   * `chaos`: chaos mode's draws (./chaos.ts), by which a wake-up that AWS would give EventBridge Scheduler comes
   * late within its window, or twice; `timeScale`, the stack's, to tell those wake-ups from the queue's delays.
   */
  constructor(
    private readonly queue: DeliveryQueue,
    private readonly chaos?: { draws: ChaosDraws; timeScale: number },
  ) {}

  /** Timers cost nothing: never worth leaving to the sweeper. */
  needsSchedule(): boolean {
    return false;
  }

  async schedule(message: DeliveryMessage, at: Date): Promise<void> {
    const delayMs = Math.max(0, at.getTime() - Date.now());
    const wakeUps = this.chaos && this.isSchedule(message, delayMs) ? this.chaos.draws.wakeUps(delayMs) : [delayMs];
    for (const afterMs of wakeUps) {
      const timer = setTimeout(() => {
        LocalRetryScheduler.timers.delete(timer);
        this.queue
          .send([message])
          .catch((err: unknown) =>
            logger.error('Local scheduler could not enqueue', { error: err as Error, message: withoutEvent(message) }),
          );
      }, afterMs);
      LocalRetryScheduler.timers.add(timer);
    }
  }

  /**
   * Whether AWS would wake this with a schedule (AwsRetryScheduler): a retry further out than the queue's delay
   * reaches, counted at TIME_SCALE 1. The rest are delayed messages, which chaos mode makes late or doubles when
   * the queue poller receives them; deferrals and waits for the rate (seconds at most, never scaled) among them.
   */
  private isSchedule(message: DeliveryMessage, delayMs: number): boolean {
    const retry = message.deferrals === undefined && message.rate_at === undefined;
    return retry && delayMs / (this.chaos?.timeScale ?? 1) > SQS_MAX_DELAY_MS;
  }

  /** Stopping the local stack clears pending timers; the sweeper finds their rows at the next start. */
  static clearAll(): void {
    for (const timer of LocalRetryScheduler.timers) clearTimeout(timer);
    LocalRetryScheduler.timers.clear();
  }
}

/** SES locally: one .eml file per mail in a git-ignored folder, and a log line. */
export class OutboxMailer implements Mailer {
  constructor(private readonly dir: string) {}

  async send(mail: Mail): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    const file = join(
      this.dir,
      `${new Date().toISOString().replace(/[:.]/g, '-')}-${Math.random().toString(36).slice(2, 8)}.eml`,
    );
    const eml = [
      'From: Shop Calls <no-reply@shop-calls.local>',
      `To: ${mail.to}`,
      `Subject: ${mail.subject}`,
      `Date: ${new Date().toUTCString()}`,
      'Content-Type: text/plain; charset=utf-8',
      '',
      mail.text,
      '',
    ].join('\r\n');
    writeFileSync(file, eml);
    logger.warn('Email written to the local outbox', { to: mail.to, subject: mail.subject, file });
  }
}
