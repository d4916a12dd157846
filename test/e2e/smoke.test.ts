import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { localSqsClient } from '../../lib/local/sqs';
import { startTestStack } from '../helpers/stack';

/** `npm run smoke -- --local …` (tsx bin/smoke.ts, as npm runs it) against this process's local stack. */
function smoke(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(join('node_modules', '.bin', 'tsx'), ['bin/smoke.ts', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe('the post-deploy smoke script against the local stack', () => {
  let stack: Awaited<ReturnType<typeof startTestStack>>;
  /** The message ids of every batch the stack's ingest queue handed to the ingest handler. */
  const ingested: string[] = [];
  beforeAll(async () => {
    stack = await startTestStack({
      wrapHandlers: (h) => ({
        ...h,
        ingest: (event) => {
          ingested.push(...event.Records.map((r) => r.messageId));
          return h.ingest(event);
        },
      }),
    });
  });
  afterAll(() => stack.stop());

  it('creates a shop and key, calls /v1/me, registers an endpoint on its own receiver, sends a call through the ingest queue and verifies the signed delivery', async () => {
    expect(ingested).toEqual([]);
    const { code, out } = await smoke(['--local', '--api-url', stack.url, '--timeout-seconds', '45'], {
      DYNAMODB_ENDPOINT: stack.dynamodbEndpoint,
      TABLE_NAME: stack.tableName,
      INGEST_QUEUE_URL: stack.ingestQueue.url,
    });
    expect(out).toMatch(/✓ GET \/v1\/me/);
    // The call went in as a message on the stack's ingest queue, and the queue's consumer recorded it.
    const sent = out.match(/✓ call sim-[0-9a-f]{16} sent to the ingest queue (\S+) \(message (\S+)\)/);
    expect(sent?.[1]).toBe(stack.ingestQueue.url);
    expect(ingested).toContain(sent?.[2]);
    expect(out.indexOf('recorded from the queue')).toBeGreaterThan(out.indexOf('sent to the ingest queue'));
    expect(out).toMatch(/✓ call call_[0-9a-z]{26} recorded from the queue/);
    expect(out).toMatch(/✓ signature verified with the endpoint secret/);
    expect(out).toMatch(
      /PASS: shop shop_[0-9a-z]{26}, call call_[0-9a-z]{26} through the ingest queue, event evt_[0-9a-z]{26}, signature verified/,
    );
    expect(code).toBe(0);
  }, 90_000);

  it('sets a call the local ingest queue cannot record aside in its dead-letter queue, with the reason', async () => {
    const sqs = localSqsClient(new URL(stack.ingestQueue.url).origin);
    try {
      const { MessageId } = await sqs.send(
        new SendMessageCommand({
          QueueUrl: stack.ingestQueue.url,
          MessageBody: JSON.stringify({ shop_id: stack.demo.shop.id }),
        }),
      );
      let dead: { Body?: string; MessageAttributes?: Record<string, { StringValue?: string }> } | undefined;
      for (let i = 0; i < 20 && !dead; i++) {
        const got = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: stack.ingestQueue.dlqUrl,
            MaxNumberOfMessages: 1,
            WaitTimeSeconds: 1,
            MessageAttributeNames: ['All'],
          }),
        );
        dead = got.Messages?.[0];
      }
      expect(ingested).toContain(MessageId);
      expect(dead?.Body).toBe(JSON.stringify({ shop_id: stack.demo.shop.id }));
      expect(dead?.MessageAttributes).toMatchObject({
        ErrorCode: { StringValue: 'parameter_missing' },
        ErrorParam: { StringValue: 'external_id' },
        SourceMessageId: { StringValue: MessageId },
      });
    } finally {
      sqs.destroy();
    }
  }, 60_000);

  it('says what is missing when the stack outputs file is absent (exit 2)', async () => {
    const { code, out } = await smoke(['--stack', 'Nope', '--outputs', join('no-such-dir', 'outputs.json')], {});
    expect(out).toMatch(/outputs\.json not found: deploy with `npx cdk deploy --outputs-file/);
    expect(code).toBe(2);
  }, 60_000);
});
