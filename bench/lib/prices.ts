/**
 * AWS list prices for the benchmarks' cost lines: us-east-1, on-demand, as published on the
 * AWS pricing pages as of January 2025. Written down from those pages without network
 * access when this file was made: check them before quoting a figure. Free tiers are left
 * out, and so is data transfer out, which a webhook pays whichever service sends it.
 */
export const PRICES_AS_OF = '2025-01';
export const PRICE_REGION = 'us-east-1';

/** Lambda on arm64 (Graviton): per GB-second of billed duration (first tier) and per million invocations. */
export const LAMBDA_ARM64_PER_GB_SECOND = 0.0000133334;
export const LAMBDA_PER_MILLION_REQUESTS = 0.2;

/**
 * DynamoDB on-demand (standard table class), since the 2024-11-01 price cut: per million
 * write and read request units. A write is one unit per KB (two in a transaction), a
 * strongly consistent read one per 4 KB (two in a transaction), an eventually consistent
 * one half a unit. Lambda's reads of the table's stream are free.
 */
export const DYNAMODB_PER_MILLION_WRITE_UNITS = 0.625;
export const DYNAMODB_PER_MILLION_READ_UNITS = 0.125;

/** SQS standard queue: per million requests, each 64 KB chunk of a request's payload billed as one request. */
export const SQS_STANDARD_PER_MILLION_REQUESTS = 0.4;

/** EventBridge API destinations: per million invocations (each HTTP request it makes). */
export const EVENTBRIDGE_API_DESTINATIONS_PER_MILLION = 0.2;
/** EventBridge custom events put on an event bus, per million (64 KB chunks): what triggers an API destination. */
export const EVENTBRIDGE_CUSTOM_EVENTS_PER_MILLION = 1.0;
/** EventBridge Scheduler: per million scheduled invocations. */
export const EVENTBRIDGE_SCHEDULER_PER_MILLION = 1.0;

/** CloudWatch Logs: per GB ingested (standard log class); each log event bills its message plus 26 bytes. */
export const CLOUDWATCH_LOGS_PER_GB_INGESTED = 0.5;
/** X-Ray: per million traces recorded (retrieval and scans are billed apart, when someone reads them). */
export const XRAY_PER_MILLION_TRACES = 5.0;
/** KMS: per million requests ($0.03 per 10,000). */
export const KMS_PER_MILLION_REQUESTS = 3.0;
