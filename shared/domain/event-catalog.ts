import catalog from '../../docs/event-types.json';
import type { EventType } from './event-types';

export interface EventTypeResource {
  object: 'event_type';
  type: EventType;
  description: string;
  /** JSON Schema (2020-12) of the event, self-contained: what the OpenAPI document's `webhooks` section says of it. */
  schema: Record<string, unknown>;
  example: object;
}

/**
 * Every event type ever sent (GET /v1/event-types), as `npm run openapi` derives it from the zod
 * schemas with the OpenAPI document (lib/openapi/event-catalog.ts): a cold start builds no JSON
 * Schema, and a test keeps the file equal to what the schemas say.
 */
export const eventTypeCatalog = (): EventTypeResource[] => catalog as EventTypeResource[];
