/**
 * Cold-start reference of the portal, which uses no SDK client: the libraries it loads
 * (Powertools' Logger, made at load and given each invocation's context, as its docs show)
 * and the same answer (the page, read from the same folder, with its content type). What is
 * left between the two is our code's share: the envelope, the asset table, the headers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';

const logger = new Logger();

export const handler = async (_event: unknown, context: Context) => {
  logger.addContext(context);
  return {
    statusCode: 200,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: readFileSync(join(process.cwd(), 'portal', 'index.html'), 'utf8'),
  };
};
