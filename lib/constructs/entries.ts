import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { portalRoute, routes } from '../../shared/routes';

/** The repository root: cdk runs the app there, and so do the tests. */
export function repoRoot(): string {
  const root = process.cwd();
  if (!existsSync(join(root, 'shared', 'routes.ts'))) throw new Error(`run from the repository root (not ${root})`);
  return root;
}

/** Functions that are not /v1 routes. */
export const PIPELINE_FUNCTIONS = {
  Authorizer: 'functions/authorizer.ts',
  Fallback: 'functions/fallback.ts',
  Fanout: 'functions/fanout.ts',
  Notify: 'functions/notify.ts',
  Deliver: 'functions/deliver.ts',
  Ingest: 'functions/ingest.ts',
  Sweep: 'functions/sweep.ts',
  Portal: portalRoute.handler,
} as const;

/** Every Lambda function of the stack, by construct id: one per built route, plus the pipeline's. */
export function allFunctionEntries(): Record<string, string> {
  const routeEntries = routes
    .filter((r) => r.handler)
    .map((r) => [r.operationId[0]?.toUpperCase() + r.operationId.slice(1), r.handler as string]);
  return { ...Object.fromEntries(routeEntries), ...PIPELINE_FUNCTIONS };
}

/**
 * The wiring parts each table-backed function's handler passes to `lambdaDeps(...)`, by
 * construct id: its DynamoDB actions follow from them (./table-access.ts). GET routes keep
 * the reads only. test/cdk/table-access.test.ts reads the handlers to keep this in step.
 */
export const FUNCTION_TABLE_PARTS: Record<string, readonly string[]> = {
  Authorizer: ['apiKeyDeps', 'rateLimitDeps', 'portalSessionDeps'],
  Fanout: ['fanoutDeps'],
  Notify: ['notifyDeps'],
  Deliver: ['deliverDeps'],
  Ingest: ['callDeps', 'ingestDeadLetterDeps'],
  Sweep: ['sweepDeps'],
  CreateWebhookEndpoint: ['endpointDeps', 'urlGuardDeps', 'cipherDeps', 'idempotencyDeps'],
  ListWebhookEndpoints: ['endpointDeps'],
  GetWebhookEndpoint: ['endpointPageDeps'],
  UpdateWebhookEndpoint: ['endpointDeps', 'urlGuardDeps', 'endpointLifecycleDeps'],
  DeleteWebhookEndpoint: ['endpointLifecycleDeps'],
  ListWebhookEndpointDeliveries: ['endpointPageDeps', 'cursorDeps'],
  GetWebhookEndpointStats: ['endpointLifecycleDeps'],
  RecoverWebhookEndpoint: ['recoveryDeps', 'idempotencyDeps'],
  GetWebhookEndpointRecovery: ['recoveryDeps'],
  RotateWebhookEndpointSecret: ['endpointDeps', 'cipherDeps', 'idempotencyDeps'],
  TestWebhookEndpoint: ['endpointDeps', 'eventWriterDeps'],
  ListEvents: ['eventPageDeps', 'cursorDeps'],
  GetEventFeed: ['eventFeedDeps', 'cursorDeps'],
  GetEvent: ['eventPageDeps'],
  RedeliverEvent: ['eventLogDeps'],
  CreatePortalSession: ['portalSessionDeps', 'shopDeps', 'idempotencyDeps'],
  ListPortalSessions: ['portalSessionDeps', 'apiKeyDeps', 'cursorDeps'],
  DeletePortalSession: ['portalSessionDeps'],
  ListCalls: ['callDeps', 'cursorDeps'],
  GetCall: ['callDeps'],
  GetCallTranscript: ['callDeps'],
  GetCallSummary: ['callDeps'],
  ListJobs: ['jobDeps', 'cursorDeps'],
  GetJob: ['jobDeps'],
  ApproveJob: ['jobDeps', 'idempotencyDeps'],
  DeclineJob: ['jobDeps', 'idempotencyDeps'],
  GetShop: ['shopDeps'],
  UpdateShop: ['shopDeps', 'idempotencyDeps'],
  GetMe: ['shopDeps'],
};
