import * as z from 'zod';
import { EVENT_TYPE_DESCRIPTIONS, EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES } from '../../shared/domain/event-types';
import type { OperationSpec } from '../../shared/http/handler';
import { responses as successResponses } from './responses';
import { routes, type Route } from '../../shared/routes';
import { webhookBodies } from '../../shared/domain/resources';
import { errorSchema } from './envelopes';
import { SCOPES, type Scope } from '../../shared/domain/scopes';

/** Declared on the security scheme (OpenAPI declares scopes only for OAuth2 flows, so as an extension). */
const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'calls:read': 'List and read calls and their summaries.',
  'transcripts:read': 'Read call transcripts.',
  'jobs:read': 'List and read jobs.',
  'jobs:write': 'Approve and decline jobs (with a write key).',
  'settings:read': 'Read the shop and the calling key.',
  'settings:write': 'Change the shop (with a write key).',
  'webhooks:read': 'Read webhook endpoints, their deliveries, stats and recoveries; read events.',
  'webhooks:write':
    'Manage webhook endpoints; read and redeliver events; list portal sessions, and make and ' +
    'delete them (with a write key). Allows everything `webhooks:read` does.',
};

type Json = Record<string, unknown>;
const REF = (id: string) => ({ $ref: `#/components/schemas/${id}` });

/** JSON Schema 2020-12 of a zod schema; registered schemas become $refs into components. */
function jsonSchema(schema: z.core.$ZodType, io: 'input' | 'output'): Json {
  const id = z.globalRegistry.get(schema)?.id;
  if (id && io === 'output') return REF(id);
  const { $schema: _s, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  }) as Json;
  return rest;
}

/**
 * zod writes each registered schema's `$id` (a fragment, which OpenAPI's schema forbids); the
 * components' names already identify them.
 */
function stripIds(schema: Json): Json {
  const { $schema: _s, $id: _dollarId, id: _id, ...rest } = schema;
  return rest;
}

/** The event unions (`oneOf` on `type`) name their discriminator, so generated clients narrow `data` by `type`. */
function withDiscriminator(name: string, schema: Json): Json {
  const oneOf = schema.oneOf as { $ref?: string }[] | undefined;
  if (!['Event', 'EventWithDeliveries'].includes(name) || !oneOf) return schema;
  const suffix = name === 'Event' ? '' : 'WithDeliveries';
  const mapping = Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      `#/components/schemas/${z.globalRegistry.get(webhookBodies[type])?.id ?? ''}${suffix}`,
    ]),
  );
  return { ...schema, discriminator: { propertyName: 'type', mapping } };
}

/**
 * Query values arrive as strings and the handlers parse them; the document gives their
 * meaning (an integer `limit`), which generated clients and validators work with.
 */
const QUERY_SCHEMAS: Record<string, Json> = {
  limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size.' },
  cursor: {
    type: 'string',
    minLength: 1,
    maxLength: 4096,
    description: 'The `next_cursor` of the previous page; opaque.',
  },
};

/** Query parameters that read differently on one operation. */
const QUERY_OVERRIDES: Record<string, Record<string, Json>> = {
  getEventFeed: {
    limit: { ...QUERY_SCHEMAS.limit, default: 100 },
    cursor: {
      ...QUERY_SCHEMAS.cursor,
      description: 'The `next_cursor` of a previous answer; opaque. Not with `since`.',
    },
    since: {
      type: 'string',
      format: 'date-time',
      description: 'Start at the first event at or after this time (within the last 30 days). Not with `cursor`.',
    },
    types: {
      type: 'string',
      maxLength: 1000,
      description: 'Comma-separated event types or families (`job.*`); by default every type the key may read.',
      examples: ['job.*,call.completed'],
    },
  },
};

/** Operations grouped by what they act on: the first path segment after /v1. */
const TAGS: { name: string; description: string; segments: string[] }[] = [
  { name: 'Calls', description: 'Finished calls, their transcripts and summaries.', segments: ['calls'] },
  {
    name: 'Jobs',
    description: 'Work requests created from calls; approve or decline pending ones.',
    segments: ['jobs'],
  },
  { name: 'Shop', description: "The shop's settings and the calling key.", segments: ['shop', 'me'] },
  { name: 'Webhook endpoints', description: 'Where events are delivered, signed.', segments: ['webhook-endpoints'] },
  {
    name: 'Events',
    description: "The event log (30 days), each event's deliveries, and what each event type means.",
    segments: ['events', 'event-types'],
  },
  {
    name: 'Portal sessions',
    description: 'Short-lived links to the webhook portal, for people who should not hold an API key.',
    segments: ['portal-sessions'],
  },
];

function tagOf(route: Route): string {
  const segment = route.path.split('/')[2] ?? '';
  const tag = TAGS.find((t) => t.segments.includes(segment));
  if (!tag) throw new Error(`${route.path} has no tag in lib/openapi/document.ts`);
  return tag.name;
}

function components(): Json {
  const all = z.toJSONSchema(z.globalRegistry, {
    target: 'draft-2020-12',
    io: 'output',
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Json> };
  return Object.fromEntries(
    Object.entries(all.schemas)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, schema]) => [name, withDiscriminator(name, stripIds(schema))]),
  );
}

const ERROR_RESPONSES: Record<string, string> = {
  '400':
    'Invalid request: malformed JSON, a missing, invalid or unknown parameter (`param` names ' +
    'it), or an invalid cursor.',
  '401':
    "No API key, or an unknown or revoked one; or a portal session's token that expired, was " +
    'deleted or whose API key was revoked (the message says which).',
  '403':
    "The key lacks the scope (`insufficient_scope`; also a portal session's token outside the " +
    "portal's operations, or a read-only one on a write), or is read-only on a write " +
    "(`write_key_required`). Also API Gateway's own refusal, before any operation runs, once a " +
    'source address is over its budget of failed authentications: a bare `{"message": ' +
    '"Forbidden"}` (a `GatewayError`) with no `Request-Id`.',
  '404':
    "Unknown id, another shop's id, or unknown path; for a replayed create, the endpoint it created has been deleted.",
  '409':
    'Version conflict (with `current_version`), invalid state (for a replayed create: the ' +
    "endpoint's secret was rotated since), or an Idempotency-Key still in use.",
  '410': 'A feed cursor older than the retention (30 days), `cursor_expired`: start again with `since`.',
  '413':
    "Body over 64 KiB. In AWS a body over API Gateway's 10 MB limit gets the gateway's own bare " +
    'answer (a `GatewayError`, no `Request-Id`).',
  '415': 'A body without `Content-Type: application/json`.',
  '422': 'Idempotency-Key reused with another method, path or body, or by another API key.',
  '429':
    "Rate limited (`rate_limited`, per API key); see `Retry-After`. In AWS, past the stage's " +
    'overall throttle, API Gateway answers itself with a bare `{"message": "Too Many Requests"}` ' +
    '(a `GatewayError`, no `Request-Id`, no `Retry-After`).',
  '500': 'Internal error; the body never carries internal details.',
};

/** Statuses API Gateway may answer itself, before any operation runs, with its own bare body. */
const GATEWAY_ANSWERS = ['403', '413', '429'];
const GATEWAY_ERROR: Json = {
  type: 'object',
  description: "API Gateway's own answer, not the service's: no `error` object and no `Request-Id`.",
  properties: { message: { type: 'string', examples: ['Forbidden', 'Too Many Requests', 'Request Entity Too Large'] } },
  required: ['message'],
  additionalProperties: false,
};

function errorCodesFor(route: Route): string[] {
  const codes = ['400', '401', '403', '429', '500'];
  // A replayed create answers 404 once the endpoint (or portal session) it created is deleted.
  if (route.path.includes('{id}') || ['createWebhookEndpoint', 'createPortalSession'].includes(route.operationId))
    codes.push('404');
  if (route.write) codes.push('413', '415');
  if (route.idempotent) codes.push('409', '422');
  if (['approveJob', 'declineJob', 'rotateWebhookEndpointSecret', 'testWebhookEndpoint'].includes(route.operationId))
    codes.push('409');
  if (route.operationId === 'getEventFeed') codes.push('410');
  return [...new Set(codes)].sort();
}

/**
 * The service reads an absent body as `{}` (`requestBody` in shared/http/middleware.ts): an
 * operation needs a body exactly when its schema refuses `{}`.
 */
export const bodyRequired = (schema: z.core.$ZodType): boolean => !z.safeParse(schema, {}).success;

function describeAccess(route: Route): string {
  const scopes =
    route.scopes.length === 0 ? 'Any valid key' : `Scope ${route.scopes.map((scope) => `\`${scope}\``).join(' or ')}`;
  const session = route.portalSession
    ? `; a portal session's token may call it${route.write ? ' (not a read-only one)' : ''}`
    : '';
  const write = route.write ? '; needs a write key' : '';
  return `${scopes}${write}${route.idempotent ? '; accepts Idempotency-Key' : ''}${session}`;
}

function operation(route: Route, spec: OperationSpec<z.core.$ZodType, z.core.$ZodType>): Json {
  const success = successResponses[route.operationId];
  if (!success) throw new Error(`${route.operationId} has no entry in lib/openapi/responses.ts`);
  const parameters: Json[] = [];
  for (const name of route.path.match(/\{(\w+)\}/g) ?? []) {
    parameters.push({
      name: name.slice(1, -1),
      in: 'path',
      required: true,
      schema: { type: 'string' },
      description: 'External id with its type prefix',
    });
  }
  if (spec.query) {
    const q = jsonSchema(spec.query, 'input') as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, schema] of Object.entries(q.properties ?? {})) {
      parameters.push({
        name,
        in: 'query',
        required: q.required?.includes(name) ?? false,
        schema: QUERY_OVERRIDES[route.operationId]?.[name] ?? QUERY_SCHEMAS[name] ?? schema,
      });
    }
  }
  if (route.idempotent) {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      schema: { type: 'string', minLength: 1, maxLength: 255 },
      description: 'Replays the first successful response for 24 hours.',
    });
  }
  const status = String(success.status ?? 200);
  const responses: Json = {
    [status]: {
      description: 'Success',
      headers: { 'Request-Id': { $ref: '#/components/headers/Request-Id' } },
      content: { 'application/json': { schema: jsonSchema(success.schema, 'output') } },
    },
  };
  for (const code of errorCodesFor(route)) responses[code] = { $ref: `#/components/responses/Error${code}` };
  return {
    operationId: route.operationId,
    tags: [tagOf(route)],
    summary: `${route.method} ${route.path}`,
    description: `${describeAccess(route)}.`,
    // Alternatives: any one scope allows it; a portal session's token too, on the portal's routes.
    security: [
      ...(route.scopes.length === 0 ? [{ apiKey: [] }] : route.scopes.map((scope) => ({ apiKey: [scope] }))),
      ...(route.portalSession ? [{ portalSession: [] }] : []),
    ],
    'x-scopes': route.scopes,
    'x-write-key': route.write,
    'x-portal-session': route.portalSession,
    parameters,
    ...(spec.body
      ? {
          requestBody: {
            required: bodyRequired(spec.body),
            content: { 'application/json': { schema: jsonSchema(spec.body, 'input') } },
          },
        }
      : {}),
    responses,
  };
}

function webhooks(): Json {
  const header = (description: string) => ({ required: true, schema: { type: 'string' }, description });
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          summary: `${type} webhook`,
          description: `${EVENT_TYPE_DESCRIPTIONS[type]} ${
            (SUBSCRIBABLE_EVENT_TYPES as readonly string[]).includes(type)
              ? `Sent to endpoints subscribed to \`${type}\` (or \`*\`).`
              : 'Sent only to the endpoint named by POST /v1/webhook-endpoints/{id}/test.'
          } Verify the raw body with the Standard Webhooks scheme.`,
          parameters: [
            {
              name: 'webhook-id',
              in: 'header',
              ...header('The event id: the same on every retry and redelivery; deduplicate on it.'),
            },
            { name: 'webhook-timestamp', in: 'header', ...header('Unix seconds of this attempt.') },
            {
              name: 'webhook-signature',
              in: 'header',
              ...header('Space-separated `v1,<base64>` HMAC-SHA256 signatures, one per valid secret.'),
            },
          ],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: jsonSchema(webhookBodies[type] as z.core.$ZodType, 'output') } },
          },
          responses: {
            '2XX': { description: 'Acknowledged. Anything else, a timeout (10 s) or a redirect is retried.' },
          },
        },
      },
    ]),
  );
}

/** The OpenAPI 3.1 document of the service, from the route table and each operation's spec. */
export function buildOpenApiDocument(specs: Record<string, OperationSpec<z.core.$ZodType, z.core.$ZodType>>): Json {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const spec = specs[route.operationId];
    if (!spec) continue;
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation(route, spec) };
  }
  jsonSchema(errorSchema, 'output');
  return {
    openapi: '3.1.0',
    info: {
      title: 'Shop Calls API',
      version: '1.0.0',
      description:
        'Calls, transcripts, summaries and work-queue jobs of a trade shop; shop settings; ' +
        'signed webhooks. The contract (errors, lists, idempotency, webhooks, limits) is ' +
        'docs/api.md in the repository.',
    },
    servers: [
      { url: '/', description: 'the host that serves this document' },
      {
        url: 'http://127.0.0.1:{port}',
        description: 'local stack (npm start)',
        variables: { port: { default: '3000', description: 'PORT of npm start' } },
      },
    ],
    tags: TAGS.map(({ name, description }) => ({ name, description })),
    security: [{ apiKey: [] }],
    paths,
    webhooks: webhooks(),
    components: {
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description:
            `\`Authorization: Bearer sk_test_…\` or \`sk_live_…\`. Each operation lists the scopes ` +
            `that allow it, any one of them (OpenAPI 3.1 role names); the scopes are ` +
            `${SCOPES.map((sc) => `\`${sc}\``).join(', ')}. Every POST and PATCH also needs a ` +
            `write key.`,
          'x-scopes': SCOPE_DESCRIPTIONS,
        },
        portalSession: {
          type: 'http',
          scheme: 'bearer',
          description:
            "`Authorization: Bearer pst_…`: a portal session's token (POST /v1/portal-sessions), " +
            'valid until its `expires_at` unless deleted or the API key that made it is revoked. ' +
            'It allows the operations that list it and nothing else; a read-only session only ' +
            'their GETs. Every answer to it carries `Portal-Session-Id`, ' +
            '`Portal-Session-Expires-At`, `Portal-Session-Read-Only` and ' +
            '`Portal-Session-Shop-Name` (percent-encoded UTF-8).',
        },
      },
      headers: {
        'Request-Id': { description: 'Id of this request; error bodies repeat it.', schema: { type: 'string' } },
      },
      responses: Object.fromEntries(
        Object.entries(ERROR_RESPONSES).map(([code, description]) => [
          `Error${code}`,
          {
            description,
            headers: { 'Request-Id': { $ref: '#/components/headers/Request-Id' } },
            content: {
              'application/json': {
                schema: GATEWAY_ANSWERS.includes(code) ? { anyOf: [REF('Error'), REF('GatewayError')] } : REF('Error'),
              },
            },
          },
        ]),
      ),
      schemas: { ...components(), GatewayError: GATEWAY_ERROR },
    },
  };
}
