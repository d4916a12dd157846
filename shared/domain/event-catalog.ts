import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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
 * schemas with the OpenAPI document (lib/openapi/event-catalog.ts), and a test keeps equal to what
 * the schemas say. Relative to the working directory: the repository root locally, and the
 * operation's bundle carries it at the same path (its route's `files`).
 */
export const EVENT_TYPE_CATALOG_FILE = 'docs/event-types.json';

/**
 * The catalog's JSON text, as written: the operation serves it without parsing it, so a cold start
 * neither builds its few thousand objects nor serializes them again.
 */
export const eventTypeCatalogText = (): string =>
  readFileSync(join(process.cwd(), EVENT_TYPE_CATALOG_FILE), 'utf8').trim();

export const eventTypeCatalog = (): EventTypeResource[] => JSON.parse(eventTypeCatalogText()) as EventTypeResource[];
