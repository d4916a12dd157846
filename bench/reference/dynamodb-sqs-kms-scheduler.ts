/** Cold-start reference of the delivery consumer: the table, the queue, KMS and EventBridge Scheduler. */
import { getItem } from './sdk/dynamodb';
import { decrypt } from './sdk/kms';
import { createSchedule } from './sdk/scheduler';
import { sendMessage } from './sdk/sqs';

export const handler = async () => {
  await getItem();
  await sendMessage();
  await decrypt();
  await createSchedule();
};
