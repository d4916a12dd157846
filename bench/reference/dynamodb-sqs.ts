/** Cold-start reference of the fan-out and the sweeper: the table and the delivery queue. */
import { callDynamoDB } from './sdk/dynamodb';
import { ONE_CALL_EACH, type ReferenceRequests } from './sdk/requests';
import { callSqs } from './sdk/sqs';

export const handler = async (event: ReferenceRequests) => {
  await callDynamoDB(event.DynamoDB ?? ONE_CALL_EACH.DynamoDB);
  await callSqs(event.SQS ?? ONE_CALL_EACH.SQS);
};
