import * as z from 'zod/mini';

/**
 * An endpoint's `filter`: a condition on the event envelope `{ type, data }` in a subset of
 * MongoDB's query language (docs/api.md, Filters). This module only
 * validates; the matching is shared/domain/event-filter.ts (a library, restricted to the
 * same operators). Nothing here runs code: every operator that could (`$where`,
 * `$function`, `$expr`, `$accumulator`) is refused, as is everything else not listed.
 */
type FilterValue = null | boolean | number | string | FilterValue[] | { [key: string]: FilterValue };
export type EventFilter = { [key: string]: FilterValue };

export const FILTER_MAX_BYTES = 4096;
const FILTER_MAX_DEPTH = 8;
/** Operators on one field's value (`{"data.x": {"$gt": 1}}`). */
const FIELD_OPERATORS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists', '$not'] as const;
/** Operators that combine whole conditions (`{"$or": [{…}, {…}]}`). */
const LOGICAL_OPERATORS = ['$and', '$or', '$nor'] as const;
export const FILTER_OPERATORS = [...FIELD_OPERATORS, ...LOGICAL_OPERATORS] as const;

const SUPPORTED = `supported: ${FILTER_OPERATORS.join(' ')}`;
// Never a path into event data, and the names that would reach an object's prototype instead.
const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype']);

export const FILTER_DESCRIPTION =
  'Only events that match this condition are sent to the endpoint (besides being of a subscribed ' +
  'type); null: every event of those types. ' +
  'A MongoDB-style query on the event envelope: keys are `type`, `data` or dotted paths into ' +
  '`data` (`data.outcome`, `data.caller.name`); ' +
  `a value is matched for equality, or an object of operators. Operators: ` +
  `${FILTER_OPERATORS.join(', ')} (no others). ` +
  `At most ${FILTER_MAX_BYTES} bytes as JSON and ${FILTER_MAX_DEPTH} levels deep. ` +
  'Applies to the fan-out, recover and a redeliver without `endpoint_ids`; a redeliver naming ' +
  'the endpoint and a test event are sent regardless.';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isOperator = (key: string) => key.startsWith('$');
const includes = (list: readonly string[], key: string) => list.includes(key);

/** The first key path at which `value` is nested deeper than `max` levels (the filter itself is level 1), or null. */
function tooDeep(value: unknown, path: string, level: number, max: number): string | null {
  if (typeof value !== 'object' || value === null) return null;
  if (level > max) return path;
  for (const [key, child] of Object.entries(value)) {
    const found = tooDeep(child, `${path}.${key}`, level + 1, max);
    if (found) return found;
  }
  return null;
}

/** A value compared as it is (implicit equality, `$eq`, `$in`…): JSON with no operator anywhere inside. */
function literal(value: unknown, path: string): string | null {
  if (Array.isArray(value)) return first(value.map((v, i) => () => literal(v, `${path}.${i}`)));
  if (!isObject(value)) return null;
  return first(
    Object.entries(value).map(
      ([key, v]) =>
        () =>
          isOperator(key) ? operatorInValue(key, `${path}.${key}`) : literal(v, `${path}.${key}`),
    ),
  );
}

const operatorInValue = (key: string, path: string) =>
  includes(FILTER_OPERATORS, key)
    ? `${path} is inside a value to compare, where no operator is allowed: put operators directly on a field`
    : `${path} is not a supported operator (${SUPPORTED})`;

function operator(op: string, arg: unknown, path: string): string | null {
  if (includes(LOGICAL_OPERATORS, op))
    return (
      `${path} combines conditions, so it cannot apply to a field: use it as a key of the filter ` +
      `or of a condition in a list`
    );
  if (!includes(FIELD_OPERATORS, op)) return `${path} is not a supported operator (${SUPPORTED})`;
  switch (op) {
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return typeof arg === 'number' || typeof arg === 'string' ? null : `${path} must be a number or a string`;
    case '$in':
    case '$nin':
      return Array.isArray(arg) ? literal(arg, path) : `${path} must be an array of values`;
    case '$exists':
      return typeof arg === 'boolean' ? null : `${path} must be true or false`;
    case '$not':
      if (!isObject(arg) || Object.keys(arg).length === 0 || !Object.keys(arg).every(isOperator))
        return `${path} must be an object of operators, e.g. {"$in": ["a", "b"]}`;
      return first(
        Object.entries(arg).map(
          ([inner, v]) =>
            () =>
              operator(inner, v, `${path}.${inner}`),
        ),
      );
    default:
      return literal(arg, path); // $eq, $ne
  }
}

/** A field's value: an object of operators, or a value it must equal. */
function fieldValue(value: unknown, path: string): string | null {
  if (isObject(value) && Object.keys(value).some(isOperator)) {
    const field = Object.keys(value).find((k) => !isOperator(k));
    if (field !== undefined)
      return (
        `${path} mixes operators and fields (${path}.${field}): use either an object of operators ` +
        `or a value to equal`
      );
    return first(
      Object.entries(value).map(
        ([op, arg]) =>
          () =>
            operator(op, arg, `${path}.${op}`),
      ),
    );
  }
  return literal(value, path);
}

/** `type`, `data` or `data.<field>…`: the envelope the filter is matched against holds nothing else. */
function fieldPathProblem(key: string, path: string): string | null {
  const segments = key.split('.');
  const [head] = segments;
  const valid =
    (key === 'type' || head === 'data') &&
    segments.every((s) => s.length > 0 && !isOperator(s) && !FORBIDDEN_SEGMENTS.has(s));
  return valid
    ? null
    : `${path} is not a path into the event: use "type", "data" or a dotted path into data such as "data.outcome"`;
}

/** One condition (the filter, or an element of `$and`/`$or`/`$nor`). */
function condition(value: Record<string, unknown>, path: string): string | null {
  return first(
    Object.entries(value).map(([key, v]) => () => {
      const at = `${path}.${key}`;
      if (includes(LOGICAL_OPERATORS, key)) {
        if (!Array.isArray(v) || v.length === 0 || !v.every(isObject))
          return `${at} must be a non-empty array of conditions (objects)`;
        return first(v.map((c, i) => () => condition(c as Record<string, unknown>, `${at}.${i}`)));
      }
      if (includes(FIELD_OPERATORS, key)) return `${at} applies to a field: write {"data.<field>": {"${key}": …}}`;
      if (isOperator(key)) return `${at} is not a supported operator (${SUPPORTED})`;
      return fieldPathProblem(key, at) ?? fieldValue(v, at);
    }),
  );
}

function first(checks: (() => string | null)[]): string | null {
  for (const check of checks) {
    const found = check();
    if (found) return found;
  }
  return null;
}

/**
 * What is wrong with a filter, naming the offending key (`filter.data.outcome.$regex …`), or null
 * when it is valid.
 */
export function filterProblem(value: unknown): string | null {
  if (!isObject(value)) return 'filter must be an object';
  // Depth before anything that recurses without a bound (JSON.stringify included).
  const deep = tooDeep(value, 'filter', 1, FILTER_MAX_DEPTH);
  if (deep) return `filter is nested more than ${FILTER_MAX_DEPTH} levels deep (at ${deep})`;
  const bytes = new TextEncoder().encode(JSON.stringify(value)).length;
  if (bytes > FILTER_MAX_BYTES) return `filter is ${bytes} bytes as JSON; at most ${FILTER_MAX_BYTES} (4 KiB)`;
  return condition(value, 'filter');
}

/**
 * The request field. A custom type, not a record: a record copies the object and drops a
 * `__proto__` key silently, where this sees the body exactly as it was sent.
 */
export const eventFilterSchema = z
  .custom<EventFilter>((v) => isObject(v), 'filter must be an object (or null)')
  .check(
    z.superRefine((value, ctx) => {
      const found = filterProblem(value);
      if (found) ctx.issues.push({ code: 'custom', message: found, input: value });
    }),
  );
// What the custom type cannot say for itself: an object of any keys (generated clients type it so).
z.globalRegistry.add(eventFilterSchema, {
  type: 'object',
  additionalProperties: {},
  description: FILTER_DESCRIPTION,
  examples: [{ 'data.outcome': { $in: ['booked', 'emergency'] } }, { 'data.emergency': true }],
});
