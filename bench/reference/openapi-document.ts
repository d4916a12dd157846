/**
 * Cold-start reference of the fallback, which uses no SDK client: the libraries it loads
 * (Powertools' Logger, made at load and given each invocation's context, as its docs show)
 * and the same answer (the OpenAPI document, bundled the same way, with its content type).
 * What is left between the two is our code's share: the envelope, the route table, the headers.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import openapi from '../../docs/openapi.json';

const logger = new Logger();

export const handler = async (_event: unknown, context: Context) => {
  logger.addContext(context);
  return {
    statusCode: 200,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify(openapi),
  };
};
