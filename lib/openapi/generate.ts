import type { z } from 'zod';
import type { OperationSpec } from '../../shared/http/handler';
import { buildOpenApiDocument } from './document';
import { routes } from '../../shared/routes';

/** Loads every operation's spec from its handler file and builds the document. */
export async function generateOpenApi(): Promise<Record<string, unknown>> {
  const specs: Record<string, OperationSpec<z.core.$ZodType, z.core.$ZodType>> = {};
  for (const route of routes) {
    if (!route.handler) continue;
    const mod = (await import(`../../${route.handler.replace(/\.ts$/, '')}`)) as {
      spec: OperationSpec<z.core.$ZodType, z.core.$ZodType>;
    };
    specs[route.operationId] = mod.spec;
  }
  return buildOpenApiDocument(specs);
}

export const serialize = (doc: unknown): string => `${JSON.stringify(doc, null, 2)}\n`;
