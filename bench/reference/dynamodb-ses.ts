/** Cold-start reference of the owner-email function: the table and SES. */
import { callDynamoDB } from './sdk/dynamodb';
import { ONE_CALL_EACH, type ReferenceRequests } from './sdk/requests';
import { callSes } from './sdk/ses';

export const handler = async (event: ReferenceRequests) => {
  await callDynamoDB(event.DynamoDB ?? ONE_CALL_EACH.DynamoDB);
  await callSes(event.SES ?? ONE_CALL_EACH.SES);
};
