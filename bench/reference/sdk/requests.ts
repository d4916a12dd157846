/**
 * What a reference is asked to do, by client: the operations to call, once each. Absent, a
 * client makes its one default request (the "constructed and called once each");
 * empty, it is constructed and not called (as a function that builds a client its first
 * invocation does not need).
 */
export type ReferenceRequests = Partial<Record<'DynamoDB' | 'SQS' | 'KMS' | 'Scheduler' | 'SES', string[]>>;

export const ONE_CALL_EACH = {
  DynamoDB: ['GetItem'],
  SQS: ['SendMessage'],
  KMS: ['Decrypt'],
  Scheduler: ['CreateSchedule'],
  SES: ['SendEmail'],
} as const;
