/** Cold-start reference of the functions that use the table only (most API operations, the authorizer, ingest). */
import { getItem } from './sdk/dynamodb';

export const handler = async () => {
  await getItem();
};
