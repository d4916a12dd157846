import { SendEmailCommand, type SESv2Client } from '@aws-sdk/client-sesv2';
import type { Mail, Mailer } from '../domain/notifications';
import { logger } from '../logger';

/** Owner emails through SES v2 SendEmail. */
export class SesMailer implements Mailer {
  constructor(
    private readonly ses: SESv2Client,
    private readonly from: string,
  ) {}

  async send(mail: Mail): Promise<void> {
    await this.ses.send(
      new SendEmailCommand({
        FromEmailAddress: this.from,
        Destination: { ToAddresses: [mail.to] },
        Content: { Simple: { Subject: { Data: mail.subject }, Body: { Text: { Data: mail.text } } } },
      }),
    );
  }
}

/** The cloud stack without a verified SES sender: the email is not sent, and the log says so. */
export class LogOnlyMailer implements Mailer {
  async send(mail: Mail): Promise<void> {
    logger.warn('Owner email not sent: no SES sender configured', { to: mail.to, subject: mail.subject });
  }
}
