import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateOpenApi, serialize } from '../../lib/openapi/generate';
import { EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES } from '../../shared/domain/event-types';
import { routes } from '../../shared/routes';
import { validateResponse } from '../helpers/openapi-validator';

const DOC_PATH = join(__dirname, '..', '..', 'docs', 'openapi.json');

describe('OpenAPI document', () => {
  it('is up to date with the route table and the zod schemas (run `npm run openapi`)', async () => {
    expect(readFileSync(DOC_PATH, 'utf8')).toBe(serialize(await generateOpenApi()));
  });

  it('passes an OpenAPI 3.1 validator library', () => {
    // @seriousme/openapi-schema-validator is ESM-only and reads its schemas via import.meta: run it in Node itself.
    const script = `import { Validator } from '@seriousme/openapi-schema-validator';
      const result = await new Validator().validate(process.argv[1]);
      console.log(JSON.stringify(result));`;
    const out = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script, DOC_PATH], { encoding: 'utf8' }),
    ) as { valid: boolean; errors?: unknown };
    expect(out).toEqual({ valid: true });
  });

  it('describes every operation with the scopes that allow it (and the portal session where its token may call it), and every webhook event type with its signature headers', () => {
    const doc = JSON.parse(readFileSync(DOC_PATH, 'utf8')) as {
      openapi: string;
      paths: Record<string, Record<string, { operationId: string; security: unknown }>>;
      webhooks: Record<string, { post: { parameters: { name: string }[] } }>;
    };
    expect(doc.openapi).toBe('3.1.0');
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p));
    expect(ops.map((o) => o.operationId).sort()).toEqual(routes.map((r) => r.operationId).sort());
    for (const r of routes) {
      expect(doc.paths[r.path]?.[r.method.toLowerCase()]?.security).toEqual([
        // No scope listed: any valid key.
        ...(r.scopes.length === 0 ? [{ apiKey: [] }] : r.scopes.map((s) => ({ apiKey: [s] }))),
        ...(r.portalSession ? [{ portalSession: [] }] : []),
      ]);
    }
    expect(doc.paths['/v1/webhook-endpoints/{id}/deliveries']?.get?.security).toEqual([
      { apiKey: ['webhooks:read'] },
      { apiKey: ['webhooks:write'] },
      { portalSession: [] },
    ]);
    expect(doc.paths['/v1/portal-sessions']?.post?.security).toEqual([{ apiKey: ['webhooks:write'] }]);
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const w of Object.values(doc.webhooks))
      expect(w.post.parameters.map((p) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
  });

  it('makes a drifting response fail validation', () => {
    const job = {
      id: 'job_01jd0000000000000000000000',
      object: 'job',
      version: 1,
      status: 'pending',
      call_id: null,
      customer: { name: null, phone: null, address: null },
      service: 's',
      description: 'd',
      urgency: 'routine',
      requested_window: null,
      created_at: '2026-11-21T00:00:00.000Z',
      updated_at: '2026-11-21T00:00:00.000Z',
      decided_at: null,
      decline_reason: null,
    };
    expect(() => validateResponse('GET', '/v1/jobs/job_01jd0000000000000000000000', 200, job)).not.toThrow();
    expect(() =>
      validateResponse('GET', '/v1/jobs/job_01jd0000000000000000000000', 200, { ...job, colour: 'red' }),
    ).toThrow(/does not match/);
    const { version: _v, ...withoutVersion } = job;
    expect(() => validateResponse('GET', '/v1/jobs/job_01jd0000000000000000000000', 200, withoutVersion)).toThrow(
      /version/,
    );
    expect(() =>
      validateResponse('GET', '/v1/jobs/job_01jd0000000000000000000000', 200, { ...job, status: 'done' }),
    ).toThrow(/does not match/);
    expect(() => validateResponse('GET', '/v1/jobs/job_01jd0000000000000000000000', 418, {})).toThrow(/does not list/);
  });

  it("documents API Gateway's own bare 403, 413 and 429 bodies where the gateway may send them, and no other bare body", () => {
    const gateway = (message: string) => ({ message });
    const limited = {
      error: {
        type: 'rate_limit_error',
        code: 'rate_limited',
        message: 'Too many requests.',
        param: null,
        request_id: 'req_1',
      },
    };
    expect(() => validateResponse('GET', '/v1/calls', 403, gateway('Forbidden'))).not.toThrow();
    expect(() => validateResponse('GET', '/v1/calls', 429, gateway('Too Many Requests'))).not.toThrow();
    expect(() => validateResponse('GET', '/v1/calls', 429, limited)).not.toThrow();
    expect(() =>
      validateResponse(
        'POST',
        '/v1/jobs/job_01jd0000000000000000000000/approve',
        413,
        gateway('Request Entity Too Large'),
      ),
    ).not.toThrow();
    expect(() => validateResponse('GET', '/v1/calls', 429, { message: 'Too Many Requests', extra: 1 })).toThrow(
      /does not match/,
    );
    expect(() => validateResponse('GET', '/v1/calls', 400, gateway('Bad Request'))).toThrow(/does not match/);
    expect(() => validateResponse('GET', '/v1/calls', 500, gateway('Internal Server Error'))).toThrow(/does not match/);
  });

  it('tags every operation, types limit as an integer, lists the event types and types each event by `type`', () => {
    type Param = { name: string; in: string; schema: { type?: string; enum?: string[] } };
    const doc = JSON.parse(readFileSync(DOC_PATH, 'utf8')) as {
      tags: { name: string }[];
      paths: Record<
        string,
        Record<
          string,
          {
            tags: string[];
            parameters: Param[];
            requestBody?: {
              content: Record<string, { schema: { properties: Record<string, { items?: { enum?: string[] } }> } }>;
            };
          }
        >
      >;
      components: {
        schemas: Record<
          string,
          {
            $id?: string;
            oneOf?: { $ref: string }[];
            discriminator?: { propertyName: string; mapping: Record<string, string> };
          }
        >;
      };
    };
    const tagNames = doc.tags.map((t) => t.name);
    for (const op of Object.values(doc.paths).flatMap((p) => Object.values(p))) {
      expect(op.tags).toHaveLength(1);
      expect(tagNames).toContain(op.tags[0]);
      const limit = op.parameters.find((p) => p.name === 'limit');
      if (limit) expect(limit.schema.type).toBe('integer');
    }
    expect(doc.paths['/v1/events']?.get?.parameters.find((p) => p.name === 'type')?.schema.enum).toEqual([
      ...EVENT_TYPES,
    ]);
    const events =
      doc.paths['/v1/webhook-endpoints']?.post?.requestBody?.content['application/json']?.schema.properties.events;
    expect(events?.items?.enum).toEqual([...SUBSCRIBABLE_EVENT_TYPES, '*']);
    for (const name of ['Event', 'EventWithDeliveries']) {
      const union = doc.components.schemas[name];
      expect(union?.oneOf).toHaveLength(EVENT_TYPES.length);
      expect(union?.discriminator?.propertyName).toBe('type');
      expect(Object.keys(union?.discriminator?.mapping ?? {}).sort()).toEqual([...EVENT_TYPES].sort());
      for (const ref of Object.values(union?.discriminator?.mapping ?? {}))
        expect(doc.components.schemas[ref.replace('#/components/schemas/', '')]).toBeDefined();
    }
    expect(Object.values(doc.components.schemas).filter((s) => s.$id !== undefined)).toEqual([]);
  });

  it('validates an event body against the schema of its own type only', () => {
    const event = {
      id: 'evt_01jd0000000000000000000000',
      object: 'event',
      type: 'webhook_endpoint.test',
      timestamp: '2026-11-21T00:00:00.000Z',
      data: { endpoint_id: 'we_01jd0000000000000000000000' },
    };
    const list = (data: unknown[]) => ({ object: 'list', data, has_more: false, next_cursor: null });
    expect(() => validateResponse('GET', '/v1/events', 200, list([event]))).not.toThrow();
    expect(() => validateResponse('GET', '/v1/events', 200, list([{ ...event, type: 'call.completed' }]))).toThrow(
      /does not match/,
    );
  });
});
