import { createHash } from 'node:crypto';
import type { AwsApi } from './aws-call';

/**
 * SQS SendMessage and SendMessageBatch on the JSON protocol, sent to the queue URL's own
 * host as the SDK does (so the local emulator's queue URLs reach the emulator), and with the
 * SDK's check that SQS stored the body it was sent (the MD5 it answers with).
 */
/** The hex MD5 SQS answers for a message body (on send and on receive). */
export const md5 = (body: string) => createHash('md5').update(body).digest('hex');
/** Where a queue's requests go: its URL's own host. */
export const endpointOf = (queueUrl: string) => new URL(queueUrl).origin;

export async function sendMessage(sqs: AwsApi, queueUrl: string, body: string, delaySeconds?: number): Promise<void> {
  const input = { QueueUrl: queueUrl, MessageBody: body, ...(delaySeconds === undefined ? {} : { DelaySeconds: delaySeconds }) };
  const out = await sqs.call<{ MD5OfMessageBody?: string }>({ operation: 'SendMessage', input, endpoint: endpointOf(queueUrl) });
  if (out.MD5OfMessageBody !== md5(body)) throw new Error('InvalidChecksumError');
}

export interface BatchEntry {
  Id: string;
  MessageBody: string;
}

/** The entries SQS did not take are in `Failed` (the request as a whole succeeded). */
export async function sendMessageBatch(sqs: AwsApi, queueUrl: string, entries: BatchEntry[]): Promise<{ Failed: { Id: string; Code?: string; SenderFault?: boolean }[] }> {
  const out = await sqs.call<{ Successful?: { Id: string; MD5OfMessageBody?: string; MessageId?: string }[]; Failed?: { Id: string; Code?: string; SenderFault?: boolean }[] }>({
    operation: 'SendMessageBatch',
    input: { QueueUrl: queueUrl, Entries: entries },
    endpoint: endpointOf(queueUrl),
  });
  const sent = new Map(entries.map((e) => [e.Id, e.MessageBody]));
  const corrupt = (out.Successful ?? []).filter((s) => sent.has(s.Id) && s.MD5OfMessageBody !== md5(sent.get(s.Id) as string));
  if (corrupt.length > 0) throw new Error(`Invalid MD5 checksum on messages: ${corrupt.map((s) => s.MessageId).join(', ')}`);
  return { Failed: out.Failed ?? [] };
}
