/** Cold-start reference of the fan-out and the sweeper: the table and the delivery queue. */
import { getItem } from './sdk/dynamodb';
import { sendMessage } from './sdk/sqs';

export const handler = async () => {
  await getItem();
  await sendMessage();
};
