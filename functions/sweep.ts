import { nudgeStalledRecoveries, type RecoveryWorkerDeps } from '../shared/delivery/recovery-worker';
import { sweep, type SweepDeps } from '../shared/delivery/sweep';
import { drainDeadLetters } from '../shared/delivery/dead-letters';
import { logger, withLambdaContext } from '../shared/logger';
import { lambdaDeps } from '../shared/wiring/memo';
import { sweepDeps } from '../shared/wiring/pipeline';

/**
 * The sweeper: every minute (an EventBridge Scheduler schedule in AWS, a timer locally),
 * takes the deliveries of dead-lettered messages into the due index, puts back on the queue
 * every open delivery that nothing woke at its time, and wakes every running recovery that
 * has written no page for a while.
 * `horizon_ms` looks ahead (the local stack's first sweep after a start).
 */
export const makeHandler = (deps: () => SweepDeps & Pick<RecoveryWorkerDeps, 'recoveries'> = lambdaDeps(sweepDeps)) =>
  withLambdaContext(async (event?: { horizon_ms?: number }) => {
    const deadLettered = await drainDeadLetters(deps());
    if (deadLettered > 0) logger.warn('Dead-lettered deliveries put in the due index', { deadLettered });
    const report = await sweep(deps(), { horizonMs: event?.horizon_ms ?? 0 });
    if (report.enqueued > 0) logger.warn('Overdue deliveries sent again', { ...report });
    else logger.debug('Sweep', { ...report });
    const recoveriesWoken = await nudgeStalledRecoveries(deps());
    if (recoveriesWoken > 0) logger.warn('Stalled recoveries woken', { recoveriesWoken });
    return { ...report, deadLettered, recoveriesWoken };
  });

export const handler = makeHandler();
