import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';

/** The SES v2 client and, when asked, one plain-text email. */
export async function callSes(operations: readonly string[]): Promise<void> {
  const ses = new SESv2Client({});
  for (const operation of operations) {
    if (operation !== 'SendEmail') throw new Error(`the SES reference makes no ${operation} request`);
    await ses.send(
      new SendEmailCommand({
        FromEmailAddress: process.env.SES_FROM_ADDRESS,
        Destination: { ToAddresses: ['owner@reference.test'] },
        Content: { Simple: { Subject: { Data: 'Reference' }, Body: { Text: { Data: 'Reference.' } } } },
      }),
    );
  }
}
