import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateOpenApi, serialize } from '../../lib/openapi/generate';
import { EVENT_TYPES } from '../../shared/domain/event-types';
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
    const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script, DOC_PATH], { encoding: 'utf8' })) as { valid: boolean; errors?: unknown };
    expect(out).toEqual({ valid: true });
  });

  it('describes all 19 operations with their scope, and every webhook event type with its signature headers', () => {
    const doc = JSON.parse(readFileSync(DOC_PATH, 'utf8')) as { openapi: string; paths: Record<string, Record<string, { operationId: string; security: unknown }>>; webhooks: Record<string, { post: { parameters: { name: string }[] } }> };
    expect(doc.openapi).toBe('3.1.0');
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p));
    expect(ops.map((o) => o.operationId).sort()).toEqual(routes.map((r) => r.operationId).sort());
    for (const r of routes) expect(doc.paths[r.path]?.[r.method.toLowerCase()]?.security).toEqual([{ apiKey: [r.scope] }]);
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const w of Object.values(doc.webhooks)) expect(w.post.parameters.map((p) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
  });

  it('makes a drifting response fail validation', () => {
    const job = {
      id: 'job_01jd0000000000000000000000', object: 'job', version: 1, status: 'pending', call_id: null,
      customer: { name: null, phone: null, address: null }, service: 's', description: 'd', urgency: 'routine',
      requested_window: null, created_at: '2026-11-21T00:00:00.000Z', updated_at: '2026-11-21T00:00:00.000Z', decided_at: null, decline_reason: null,
    };
    expect(() => validateResponse('GET', '/v1/jobs/job_01jd0000000000000000000000', 200, job)).not.toThrow();
    expect(() => validateResponse('GET', '/v1/jobs/job_01jd0000000000000000000000', 200, { ...job, colour: 'red' })).toThrow(/does not match/);
    const { version: _v, ...withoutVersion } = job;
    expect(() => validateResponse('GET', '/v1/jobs/job_01jd0000000000000000000000', 200, withoutVersion)).toThrow(/version/);
    expect(() => validateResponse('GET', '/v1/jobs/job_01jd0000000000000000000000', 200, { ...job, status: 'done' })).toThrow(/does not match/);
    expect(() => validateResponse('GET', '/v1/jobs/job_01jd0000000000000000000000', 418, {})).toThrow(/does not list/);
  });
});
