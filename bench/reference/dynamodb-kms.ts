/** Cold-start reference of the functions that seal or open secrets (the routes with `cipher` in the route table). */
import { getItem } from './sdk/dynamodb';
import { decrypt } from './sdk/kms';

export const handler = async () => {
  await getItem();
  await decrypt();
};
