/**
 * Names a request's writes across its retries. A request with an Idempotency-Key gets a token
 * from its key, its API key and its method, path and body, so the client's retry of the same
 * request (after a 5xx whose change had in fact been made) carries the same token, and any other
 * request another. A write that finds the change it asked for already made under its own token
 * reports it done, instead of calling it a conflict or doing it twice.
 */
export interface WriteOptions {
  writeToken?: string;
}

/** How long a write token is recognised: as long as the Idempotency-Key's record is kept. */
export const WRITE_TOKEN_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Whether a change made at `at` under `madeBy` is this request's own, still within the key's window. */
export const isOwnWrite = (options: WriteOptions, madeBy: string | undefined, at: string | null, now: Date): boolean =>
  options.writeToken !== undefined &&
  madeBy === options.writeToken &&
  at !== null &&
  now.getTime() - Date.parse(at) < WRITE_TOKEN_WINDOW_MS;
