/** Cold-start reference of the functions that seal or open secrets (the routes with `cipher` in the route table). */
import { callDynamoDB } from './sdk/dynamodb';
import { callKms } from './sdk/kms';
import { ONE_CALL_EACH, type ReferenceRequests } from './sdk/requests';

export const handler = async (event: ReferenceRequests) => {
  await callDynamoDB(event.DynamoDB ?? ONE_CALL_EACH.DynamoDB);
  await callKms(event.KMS ?? ONE_CALL_EACH.KMS);
};
