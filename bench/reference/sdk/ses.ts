import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';

/** The SES v2 client and one plain-text email. */
export async function sendEmail(): Promise<void> {
  await new SESv2Client({}).send(
    new SendEmailCommand({
      FromEmailAddress: process.env.SES_FROM_ADDRESS,
      Destination: { ToAddresses: ['owner@reference.test'] },
      Content: { Simple: { Subject: { Data: 'Reference' }, Body: { Text: { Data: 'Reference.' } } } },
    }),
  );
}
