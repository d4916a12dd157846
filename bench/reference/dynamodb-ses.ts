/** Cold-start reference of the owner-email function: the table and SES. */
import { getItem } from './sdk/dynamodb';
import { sendEmail } from './sdk/ses';

export const handler = async () => {
  await getItem();
  await sendEmail();
};
