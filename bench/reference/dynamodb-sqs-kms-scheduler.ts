/** Cold-start reference of the delivery consumer: the table, the queue, KMS and EventBridge Scheduler. */
import { callDynamoDB } from './sdk/dynamodb';
import { callKms } from './sdk/kms';
import { ONE_CALL_EACH, type ReferenceRequests } from './sdk/requests';
import { callScheduler } from './sdk/scheduler';
import { callSqs } from './sdk/sqs';

export const handler = async (event: ReferenceRequests) => {
  await callDynamoDB(event.DynamoDB ?? ONE_CALL_EACH.DynamoDB);
  await callSqs(event.SQS ?? ONE_CALL_EACH.SQS);
  await callKms(event.KMS ?? ONE_CALL_EACH.KMS);
  await callScheduler(event.Scheduler ?? ONE_CALL_EACH.Scheduler);
};
