/**
 * The throughput floor in a process of its own, as the consumer runs in one
 * (bench/lib/consumer-child.ts): what each delivery must do and nothing else, at a given
 * concurrency: sign and POST over keep-alive, then record the attempt on the delivery row
 * (one conditional update).
 * It receives its rows and targets over IPC and answers with its table requests.
 *
 * Env: the stack's `env` (for the table).
 */
import './quiet';
import type { DeliveryRecord } from '../../shared/delivery/records';
import { configFromEnv } from '../../shared/config';
import { dynamoOf } from '../../shared/wiring/clients';
import { httpSender } from '../../shared/delivery/sender';
import { signedHeaders } from '../../shared/delivery/signer';
import { rowOnlyStore } from './floor-store';
import { allStages, countCalls, type OpTally } from './instrument';

export interface FloorJob {
  rows: DeliveryRecord[];
  /** Each endpoint's URL and signing secret, by endpoint id. */
  targets: Record<string, { url: string; secret: string }>;
  concurrency: number;
}

export interface FloorReport {
  table: Record<string, OpTally>;
}

const config = configFromEnv();
const db = dynamoOf(config);
const store = rowOnlyStore(db);
const table = countCalls(db.doc);
const sender = httpSender({ allowInsecureLocal: true }, 10_000);

async function run({ rows, targets, concurrency }: FloorJob): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < rows.length; i = next++) {
      const row = rows[i] as DeliveryRecord;
      const target = targets[row.endpoint_id];
      if (!target) throw new Error(`no target for ${row.endpoint_id}`);
      const body = JSON.stringify({ id: row.event_id, object: 'event', type: 'call.completed', data: {} });
      const at = new Date();
      const sent = await sender.post(new URL(target.url), signedHeaders(row.event_id, body, [target.secret], at), body);
      await store.recordAttempt(row, {
        status: 'succeeded',
        attempts: 1,
        last_attempt_at: at.toISOString(),
        next_attempt_at: null,
        sweep_at: null,
        last_response_status: sent.status,
        last_error: null,
        entry: {
          attempt: 1,
          at: at.toISOString(),
          status: sent.status,
          duration_ms: sent.durationMs,
          error: null,
          response_snippet: null,
        },
      });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

process.on('message', (job: FloorJob) => {
  void run(job).then(
    () => {
      const report: FloorReport = { table: Object.fromEntries(allStages(table)) };
      process.send?.(report, () => process.exit(0));
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
});
process.send?.('ready');
