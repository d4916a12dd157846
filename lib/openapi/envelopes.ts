import * as z from 'zod';

/**
 * The HTTP layer's envelopes, as the OpenAPI document describes them: the list body of
 * shared/http/list.ts and the error body of shared/http/errors.ts. Not domain resources, so
 * they live with the builder.
 */
export const listOf = <T extends z.ZodType>(item: T, name: string) =>
  z
    .strictObject({
      object: z.literal('list'),
      data: z.array(item),
      has_more: z.boolean(),
      next_cursor: z.string().nullable(),
    })
    .meta({ id: `${name}List` });

/** The event feed's page (functions/api/get-event-feed.ts): `next_cursor` is always there, where to ask next. */
export const eventFeedOf = <T extends z.ZodType>(item: T) =>
  z
    .strictObject({
      object: z.literal('event_feed'),
      data: z.array(item),
      next_cursor: z.string(),
      has_more: z.boolean(),
    })
    .meta({ id: 'EventFeed' });

export const errorSchema = z
  .strictObject({
    error: z.strictObject({
      type: z.enum([
        'invalid_request_error',
        'authentication_error',
        'permission_error',
        'idempotency_error',
        'rate_limit_error',
        'api_error',
      ]),
      code: z.string(),
      message: z.string(),
      param: z.string().nullable(),
      current_version: z.int().nullable().optional(),
      request_id: z.string(),
    }),
  })
  .meta({ id: 'Error' });
