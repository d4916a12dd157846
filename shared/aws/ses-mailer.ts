import type { Mail, Mailer } from '../domain/notifications';
import { logger } from '../logger';
import type { AwsApi } from './aws-call';

/** Owner emails through SES v2 SendEmail (REST-JSON `POST /v2/email/outbound-emails`). */
export class SesMailer implements Mailer {
  constructor(
    /** The SES v2 API (shared/aws/aws-call.ts, built with SES_V2). */
    private readonly ses: AwsApi,
    private readonly from: string,
  ) {}

  async send(mail: Mail): Promise<void> {
    await this.ses.call({
      operation: 'SendEmail',
      path: '/v2/email/outbound-emails',
      input: {
        FromEmailAddress: this.from,
        Destination: { ToAddresses: [mail.to] },
        Content: { Simple: { Subject: { Data: mail.subject }, Body: { Text: { Data: mail.text } } } },
      },
    });
  }
}

/** The cloud stack without a verified SES sender: the email is not sent, and the log says so. */
export class LogOnlyMailer implements Mailer {
  async send(mail: Mail): Promise<void> {
    logger.warn('Owner email not sent: no SES sender configured', { to: mail.to, subject: mail.subject });
  }
}
