import type { MiddlewareObj } from '@middy/core';
import { en } from 'zod/v4/locales';
import * as z from 'zod/mini';
import { AppError } from '../errors';
import { jsonKind, unsafeText } from './json-input';
import type { ApiEvent } from './event';
import type { HttpResult } from './response';

// The request schemas use zod/mini (a third of the full API in a bundle, and quicker to load), which
// leaves the messages to its user: the full API's English ones, set here, where every request is parsed.
z.config(en());

/**
 * Parses with zod and turns the first issue into the contract's 400 (param = dotted path). Input
 * the schema takes is then refused still if any of its strings is not text (see `unsafeText`):
 * one check for every field of every schema, which no field can be left out of.
 */
export function parseOrThrow<T extends z.core.$ZodType>(schema: T, data: unknown, root?: string): z.output<T> {
  const result = z.safeParse(schema, data);
  if (!result.success) throw issueToError(result.error.issues[0], data, root);
  const unsafe = unsafeText(data);
  if (unsafe) {
    const param = [...(root ? [root] : []), ...unsafe.path.map(String)].join('.');
    const at = param ? `Invalid ${param}: ` : 'The input ';
    throw new AppError('parameter_invalid', `${at}${unsafe.problem}`, param ? { param } : {});
  }
  return result.data;
}

function issueToError(issue: z.core.$ZodIssue | undefined, data: unknown, root?: string): AppError {
  if (!issue) return new AppError('parameter_invalid', 'Invalid request');
  if (issue.code === 'invalid_type' && issue.expected === 'object' && issue.path.length === 0 && !root) {
    return new AppError('parameter_invalid', `The input must be a JSON object, not ${jsonKind(data)}.`);
  }
  const path = [...(root ? [root] : []), ...issue.path.map(String)];
  if (issue.code === 'unrecognized_keys') {
    const param = [...path, issue.keys[0] ?? ''].join('.');
    return new AppError('parameter_unknown', `Received unknown parameter: ${param}`, { param });
  }
  const param = path.join('.');
  if (issue.code === 'invalid_type' && valueAt(data, issue.path) === undefined) {
    return new AppError('parameter_missing', `Missing required parameter: ${param}`, { param });
  }
  return new AppError('parameter_invalid', `Invalid ${param}: ${issue.message}`, { param });
}

function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = data;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

const noFields = z.strictObject({});

/**
 * An operation's request schemas, with the middleware that validates body and query before
 * anything is stored: `export const spec = requestSchemas({ query: listCallsQuery })`. An
 * operation that takes no input has `spec = {}` and is checked by `noInput()` instead, so its
 * bundle neither loads zod nor builds a schema at init.
 */
export function requestSchemas<S extends { body?: z.core.$ZodType; query?: z.core.$ZodType }>(
  schemas: S,
): S & { validate: MiddlewareObj<ApiEvent, HttpResult> } {
  const body = schemas.body ?? noFields;
  const query = schemas.query ?? noFields;
  return {
    ...schemas,
    validate: {
      before: ({ event }) => {
        event.input = {
          body: parseOrThrow(body, event.jsonBody ?? {}),
          query: parseOrThrow(query, event.queryStringParameters ?? {}),
        };
      },
    },
  };
}
