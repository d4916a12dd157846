import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { resolve } from '../../shared/routes';

type Json = Record<string, unknown>;
const DOC_ID = 'https://shop-calls.invalid/openapi.json';
const doc = JSON.parse(readFileSync(join(__dirname, '..', '..', 'docs', 'openapi.json'), 'utf8')) as Json;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ ...doc, $id: DOC_ID });

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/**
 * Checks a response of the API against docs/openapi.json with ajv (JSON Schema 2020-12):
 * its status must be documented for the operation, and its body must match the schema.
 */
export function validateResponse(method: string, path: string, status: number, body: unknown): void {
  const resolution = resolve(method, path.split('?')[0] as string);
  let ref: string;
  if (resolution.kind === 'route') {
    const op = ((doc.paths as Json)[resolution.route.path] as Json | undefined)?.[method.toLowerCase()] as
      { responses: Record<string, { $ref?: string }> } | undefined;
    const documented = op?.responses[String(status)];
    if (!documented) throw new Error(`${method} ${path} answered ${status}, which the OpenAPI document does not list`);
    ref = documented.$ref
      ? `#/components/responses/${documented.$ref.split('/').pop()}/content/application~1json/schema`
      : `#/${pointer('paths', resolution.route.path, method.toLowerCase(), 'responses', String(status), 'content', 'application/json', 'schema')}`;
  } else {
    if (path.startsWith('/v1/openapi.json')) return;
    ref = '#/components/schemas/Error';
  }
  const validate = ajv.getSchema(`${DOC_ID}${ref}`);
  if (!validate) throw new Error(`no schema at ${ref}`);
  if (!validate(body)) {
    throw new Error(
      `${method} ${path} → ${status} does not match the OpenAPI document: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`,
    );
  }
}
