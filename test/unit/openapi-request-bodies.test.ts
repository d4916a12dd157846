import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import type { OperationSpec } from '../../shared/http/handler';
import { parseOrThrow } from '../../shared/http/validation';
import { routes } from '../../shared/routes';

const DOC_PATH = join(__dirname, '..', '..', 'docs', 'openapi.json');

type Operation = { operationId: string; requestBody?: { required: boolean } };

/** Whether the service takes a request with no body: it reads one as `{}` and validates that as any body. */
function takesNoBody(schema: z.core.$ZodType): boolean {
  try {
    parseOrThrow(schema, {});
    return true;
  } catch {
    return false;
  }
}

describe('OpenAPI request bodies', () => {
  const doc = JSON.parse(readFileSync(DOC_PATH, 'utf8')) as { paths: Record<string, Record<string, Operation>> };
  const operations = new Map(
    Object.values(doc.paths)
      .flatMap((path) => Object.values(path))
      .map((op) => [op.operationId, op]),
  );

  it("marks a body required exactly when the operation's schema refuses an absent one (read as {})", async () => {
    const withBody: string[] = [];
    for (const route of routes) {
      if (!route.handler) continue;
      const { spec } = (await import(`../../${route.handler.replace(/\.ts$/, '')}`)) as {
        spec: OperationSpec<z.core.$ZodType, z.core.$ZodType>;
      };
      const op = operations.get(route.operationId);
      if (!spec.body) {
        expect({ [route.operationId]: op?.requestBody }).toEqual({ [route.operationId]: undefined });
        continue;
      }
      withBody.push(route.operationId);
      expect({ [route.operationId]: op?.requestBody?.required }).toEqual({
        [route.operationId]: !takesNoBody(spec.body),
      });
    }
    expect(withBody.length).toBeGreaterThan(2);
  });

  it('documents the bodies of redeliver and of a new portal session as optional', () => {
    expect(operations.get('redeliverEvent')?.requestBody?.required).toBe(false);
    expect(operations.get('createPortalSession')?.requestBody?.required).toBe(false);
    expect(operations.get('createWebhookEndpoint')?.requestBody?.required).toBe(true);
  });
});
