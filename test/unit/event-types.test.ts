import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import * as z from 'zod/mini';
import { makeHandler } from '../../functions/api/list-event-types';
import { buildEventTypeCatalog } from '../../lib/openapi/event-catalog';
import { serialize } from '../../lib/openapi/generate';
import { eventTypeCatalog } from '../../shared/domain/event-catalog';
import { EVENT_TYPES } from '../../shared/domain/event-types';
import { webhookBodies } from '../../shared/domain/resources';
import { apiEvent, context, parseBody, principal } from '../helpers/events';
import { validateResponse } from '../helpers/openapi-validator';

type Json = Record<string, unknown>;
const doc = JSON.parse(readFileSync(join(__dirname, '..', '..', 'docs', 'openapi.json'), 'utf8')) as {
  webhooks: Record<
    string,
    { post: { requestBody: { content: { 'application/json': { schema: { $ref: string } } } } } }
  >;
  components: { schemas: Record<string, Json> };
};

describe('event types, described once', () => {
  it('docs/event-types.json, which the operation serves, is what the zod schemas say (run `npm run openapi`)', () => {
    const file = readFileSync(join(__dirname, '..', '..', 'docs', 'event-types.json'), 'utf8');
    expect(file).toBe(serialize(buildEventTypeCatalog()));
    expect(eventTypeCatalog()).toEqual(buildEventTypeCatalog());
  });

  it('the catalog, the OpenAPI webhooks section and the code list the same types', () => {
    const catalogTypes = eventTypeCatalog().map((t) => t.type);
    expect(catalogTypes).toEqual([...EVENT_TYPES]);
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
  });

  it("each type's schema is its OpenAPI webhook body, component for component", () => {
    for (const entry of eventTypeCatalog()) {
      const ref = doc.webhooks[entry.type]?.post.requestBody.content['application/json'].schema.$ref ?? '';
      const name = ref.split('/').pop() as string;
      expect(entry.schema.$ref).toBe(`#/$defs/${name}`);
      // Every definition the catalog carries is the document's component of that name, references rebased.
      const defs = entry.schema.$defs as Record<string, Json>;
      expect(Object.keys(defs)).toContain(name);
      for (const [id, schema] of Object.entries(defs)) {
        const { id: _id, ...own } = schema;
        expect(JSON.parse(JSON.stringify(own).replaceAll('#/$defs/', '#/components/schemas/'))).toEqual(
          doc.components.schemas[id],
        );
      }
    }
  });

  it('each example is a valid event of its type, by the zod schema and by its own JSON Schema', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    for (const entry of eventTypeCatalog()) {
      expect(z.safeParse(webhookBodies[entry.type] as z.core.$ZodType, entry.example).success).toBe(true);
      const validate = ajv.compile(entry.schema);
      expect([entry.type, validate(entry.example), ajv.errorsText(validate.errors)]).toEqual([
        entry.type,
        true,
        'No errors',
      ]);
      expect((entry.example as { type: string }).type).toBe(entry.type);
      expect(entry.description.length).toBeGreaterThan(20);
    }
    // …and a JSON Schema that refuses what is not one.
    const [first] = eventTypeCatalog();
    expect(ajv.compile(first?.schema ?? {})({ ...(first?.example ?? {}), type: 'job.created' })).toBe(false);
  });

  it('answers any valid key, whatever its scopes, and a portal session, with the documented list', async () => {
    const handler = makeHandler();
    for (const who of [principal({ scopes: [] }), principal({ scopes: ['calls:read'], write: false })]) {
      const res = (await handler(apiEvent({ method: 'GET', path: '/v1/event-types', principal: who }), context())) as {
        statusCode: number;
        body: string;
      };
      expect(res.statusCode).toBe(200);
      const body = parseBody(res) as { object: string; data: { type: string }[]; has_more: boolean };
      expect([body.object, body.has_more, body.data.map((t) => t.type)]).toEqual(['list', false, [...EVENT_TYPES]]);
      validateResponse('GET', '/v1/event-types', 200, body);
    }
  });
});
