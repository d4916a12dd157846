/** Why a delivery was refused: branch on `reason`; the message says what to fix. */
export type WebhookVerificationReason =
  | 'body_not_raw'
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'invalid_secret'
  | 'no_matching_signature'
  | 'invalid_payload';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';

  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}
