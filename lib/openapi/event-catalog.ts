import * as z from 'zod/mini';
import type { EventTypeResource } from '../../shared/domain/event-catalog';
import { EVENT_EXAMPLES } from '../../shared/domain/event-examples';
import { EVENT_TYPE_DESCRIPTIONS, EVENT_TYPES } from '../../shared/domain/event-types';
import { webhookBodies } from '../../shared/domain/resources';

/**
 * Every event type ever sent, described once: from the schemas the OpenAPI document's `webhooks`
 * section is made of. `npm run openapi` writes it to docs/event-types.json, which GET /v1/event-types
 * serves as it is.
 */
export function buildEventTypeCatalog(): EventTypeResource[] {
  return EVENT_TYPES.map((type) => {
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
}
