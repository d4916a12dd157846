/** Cold-start reference of the functions that use the table only (most API operations, the authorizer, ingest). */
import { callDynamoDB } from './sdk/dynamodb';
import { ONE_CALL_EACH, type ReferenceRequests } from './sdk/requests';

export const handler = async (event: ReferenceRequests) => {
  await callDynamoDB(event.DynamoDB ?? ONE_CALL_EACH.DynamoDB);
};
