import type { APIGatewayProxyEventV2WithLambdaAuthorizer } from 'aws-lambda';
import type { Principal } from '../domain/api-keys';
import type { AuthorizerContext } from './auth-context';

/** The payload 2.0 event as the middlewares enrich it, step by step. */
export interface ApiEvent extends APIGatewayProxyEventV2WithLambdaAuthorizer<AuthorizerContext | undefined> {
  /** Set by authorize(). */
  principal?: Principal;
  /** The parsed JSON body (set by requestBody()); also what idempotency compares. */
  jsonBody?: Record<string, unknown>;
  /** Validated and typed input (set by validateInput()). */
  input?: { body: unknown; query: unknown };
}

/** `req_` + API Gateway's request id, so logs and access logs correlate. */
export function requestIdOf(event: { requestContext?: { requestId?: string } }): string {
  const raw = event.requestContext?.requestId ?? '';
  return `req_${raw.replace(/[^A-Za-z0-9]/g, '') || 'unknown'}`;
}
