/**
 * What an API key may do. The domain owns the list (keys are issued and checked with it);
 * the route table names, per operation, the scopes that allow it (any one of them).
 */
export const SCOPES = [
  'calls:read',
  'transcripts:read',
  'jobs:read',
  'jobs:write',
  'settings:read',
  'settings:write',
  'webhooks:read',
  'webhooks:write',
] as const;
export type Scope = (typeof SCOPES)[number];
