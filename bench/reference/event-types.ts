/**
 * Cold-start reference of GET /v1/event-types, which uses no SDK client: the libraries its
 * handler chain loads (Powertools' Logger, made at load and given each invocation's context,
 * and middy) and the same answer, the function's own body as the benchmark saved it
 * (BENCH_REFERENCE_BODY), read the way the function reads its catalog. What is left between the
 * two is our code's share: the handler chain.
 */
import { readFileSync } from 'node:fs';
import { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';

const logger = new Logger();

export const handler = middy(async (_event: unknown, context: Context) => {
  logger.addContext(context);
  return {
    statusCode: 200,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: readFileSync(process.env.BENCH_REFERENCE_BODY as string, 'utf8'),
  };
});
