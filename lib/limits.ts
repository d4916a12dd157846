/**
 * Timeouts that the settings in lib/config.ts are checked against at synth, so a value that
 * would break at run time never deploys. The constructs use the same numbers.
 */

/**
 * The delivery consumer's Lambda timeout: a batch of up to 10 deliveries, each leased for the
 * request timeout + 5 s.
 */
export const CONSUMER_TIMEOUT_SECONDS = 30;
export const CONSUMER_TIMEOUT_MS = CONSUMER_TIMEOUT_SECONDS * 1000;

/**
 * The longest webhook request the consumer can hold: its timeout less 10 s for the reads and
 * admission before the request, and the result's conditional writes and a retry's schedule
 * after it. The consumer starts no request that could not end, and be recorded, before Lambda
 * cuts the invocation off (shared/delivery/send-attempt.ts): with this timeout, requests start
 * within the first 8 s of an invocation.
 */
export const MAX_DELIVERY_TIMEOUT_MS = (CONSUMER_TIMEOUT_SECONDS - 10) * 1000;

/** API Gateway (HTTP API) stops waiting for an integration after 29 s and answers 503 itself. */
export const API_GATEWAY_INTEGRATION_SECONDS = 29;
