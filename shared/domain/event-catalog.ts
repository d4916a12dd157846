import * as z from 'zod/mini';
import { EVENT_EXAMPLES } from './event-examples';
import { EVENT_TYPE_DESCRIPTIONS, EVENT_TYPES, type EventType } from './event-types';
import { webhookBodies } from './resources';

export interface EventTypeResource {
  object: 'event_type';
  type: EventType;
  description: string;
  /** JSON Schema (2020-12) of the event, self-contained: what the OpenAPI document's `webhooks` section says of it. */
  schema: Record<string, unknown>;
  example: object;
}

let catalog: EventTypeResource[] | undefined;

/**
 * Every event type ever sent, described once: from the schemas the OpenAPI document's
 * `webhooks` section is made of (GET /v1/event-types). Built on first use, then kept.
 */
export function eventTypeCatalog(): EventTypeResource[] {
  catalog ??= EVENT_TYPES.map((type) => {
    const { $schema: _draft, ...schema } = z.toJSONSchema(webhookBodies[type] as z.core.$ZodType, {
      target: 'draft-2020-12',
      io: 'output',
      unrepresentable: 'any',
    }) as Record<string, unknown>;
    return {
      object: 'event_type',
      type,
      description: EVENT_TYPE_DESCRIPTIONS[type],
      schema,
      example: EVENT_EXAMPLES[type],
    };
  });
  return catalog;
}
