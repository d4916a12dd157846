/**
 * Names a request's writes across its retries. The same token comes with a retry of the same
 * request (the SDK's, after an answer was lost; the client's, with the same Idempotency-Key,
 * after a 5xx), so a write that finds the change it asked for already made, under its own
 * token, reports it done instead of calling it a conflict or doing it twice.
 */
export interface WriteOptions {
  writeToken?: string;
}
