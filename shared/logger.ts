import { Logger } from '@aws-lambda-powertools/logger';

/** Structured JSON logs; level from POWERTOOLS_LOG_LEVEL (the local stack and tests lower it). */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'shop-calls-api' });
