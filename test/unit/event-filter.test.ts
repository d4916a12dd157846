import {
  FILTER_MAX_BYTES,
  FILTER_OPERATORS,
  filterProblem,
  type EventFilter,
} from '../../shared/domain/event-filter-schema';
import { matchesFilter } from '../../shared/domain/event-filter';
import { newEvent } from '../../shared/domain/events';
import { createWebhookEndpointBody, updateWebhookEndpointBody } from '../../shared/domain/webhook-endpoints-schema';
import { parseOrThrow } from '../../shared/http/validation';
import type { AppError } from '../../shared/errors';

const at = new Date('2026-11-22T09:00:00.000Z');
const call = newEvent(
  'shop_a',
  'call.completed',
  {
    id: 'call_1',
    outcome: 'booked',
    emergency: true,
    duration_seconds: 184,
    tags: ['boiler', 'urgent'],
    caller: { name: 'Ann', phone: '+441234' },
    summary: null,
  },
  at,
);
const matches = (filter: EventFilter) => {
  expect(filterProblem(filter)).toBeNull(); // every filter matched here is one the API accepts
  return matchesFilter(filter, call);
};

describe('filter matching (sift, restricted to the subset)', () => {
  it.each<[string, EventFilter, boolean]>([
    ['implicit equality', { 'data.emergency': true }, true],
    ['implicit equality, no match', { 'data.outcome': 'voicemail' }, false],
    ['the type', { type: 'call.completed' }, true],
    ['$eq', { 'data.outcome': { $eq: 'booked' } }, true],
    ['$ne', { 'data.outcome': { $ne: 'booked' } }, false],
    ['$gt', { 'data.duration_seconds': { $gt: 180 } }, true],
    ['$gte', { 'data.duration_seconds': { $gte: 184 } }, true],
    ['$lt', { 'data.duration_seconds': { $lt: 184 } }, false],
    ['$lte', { 'data.duration_seconds': { $lte: 184 } }, true],
    ['$gt on strings', { 'data.caller.name': { $gt: 'Al' } }, true],
    ['$gt across types never matches', { 'data.duration_seconds': { $gt: '1' } }, false],
    ['$in', { 'data.outcome': { $in: ['booked', 'emergency'] } }, true],
    ['$in, no match', { 'data.outcome': { $in: ['voicemail'] } }, false],
    ['$nin', { 'data.outcome': { $nin: ['voicemail', 'spam'] } }, true],
    ['$exists: true', { 'data.caller.phone': { $exists: true } }, true],
    ['$exists: true on a null value', { 'data.summary': { $exists: true } }, true],
    ['$exists: false', { 'data.job_id': { $exists: false } }, true],
    ['$exists: false on a present field', { 'data.outcome': { $exists: false } }, false],
    ['$not', { 'data.outcome': { $not: { $in: ['voicemail'] } } }, true],
    ['$not, no match', { 'data.outcome': { $not: { $eq: 'booked' } } }, false],
    ['$and', { $and: [{ type: 'call.completed' }, { 'data.duration_seconds': { $gte: 60, $lt: 600 } }] }, true],
    ['$and, one fails', { $and: [{ type: 'call.completed' }, { 'data.emergency': false }] }, false],
    ['$or', { $or: [{ 'data.outcome': 'emergency' }, { 'data.emergency': true }] }, true],
    ['$nor', { $nor: [{ 'data.outcome': 'voicemail' }, { 'data.emergency': false }] }, true],
    ['$nor, one matches', { $nor: [{ 'data.outcome': 'booked' }] }, false],
    ['a nested path', { 'data.caller.name': 'Ann' }, true],
    ['a path that is not there', { 'data.caller.address.city': 'Leeds' }, false],
    ['null matches a missing field', { 'data.job_id': null }, true],
    ['an array holding the value', { 'data.tags': 'boiler' }, true],
    ['$in on an array field', { 'data.tags': { $in: ['urgent', 'x'] } }, true],
    ['$nin on an array field', { 'data.tags': { $nin: ['urgent'] } }, false],
    ['an array equal to the whole array', { 'data.tags': ['boiler', 'urgent'] }, true],
    ['an object equal to the whole object', { 'data.caller': { name: 'Ann', phone: '+441234' } }, true],
    ['several keys are all required', { type: 'call.completed', 'data.outcome': 'voicemail' }, false],
    ['the empty filter matches everything', {}, true],
  ])('%s', (_name, filter, expected) => {
    expect(matches(filter)).toBe(expected);
  });

  it('matches on the envelope only: ids, the timestamp and the shop are not part of it', () => {
    expect(matchesFilter({ 'data.id': 'call_1' }, call)).toBe(true);
    // Valid paths, but the envelope has no such fields at the top (validation refuses these keys).
    expect(matchesFilter({ id: call.id }, call)).toBe(false);
    expect(matchesFilter({ shop_id: 'shop_a' }, call)).toBe(false);
    expect(matchesFilter({ timestamp: { $exists: true } }, call)).toBe(false);
  });

  it('no filter matches every event', () => {
    expect(matchesFilter(null, call)).toBe(true);
    expect(matchesFilter(undefined, call)).toBe(true);
  });

  it('the library knows no operator beyond the subset: one that slipped past validation matches nothing and runs nothing', () => {
    const ran = jest.fn();
    (globalThis as Record<string, unknown>).__filterRan = ran;
    for (const filter of [
      { $where: 'globalThis.__filterRan() || true' },
      { 'data.outcome': { $regex: 'book' } },
      { 'data.tags': { $size: 2 } },
      { 'data.tags': { $elemMatch: { $eq: 'x' } } },
    ]) {
      expect(matchesFilter(filter as unknown as EventFilter, call)).toBe(false);
    }
    expect(ran).not.toHaveBeenCalled();
    delete (globalThis as Record<string, unknown>).__filterRan;
  });
});

describe('filter validation', () => {
  it("accepts every supported operator and the contract's examples", () => {
    expect(FILTER_OPERATORS).toEqual([
      '$eq',
      '$ne',
      '$gt',
      '$gte',
      '$lt',
      '$lte',
      '$in',
      '$nin',
      '$exists',
      '$not',
      '$and',
      '$or',
      '$nor',
    ]);
    expect(filterProblem({ 'data.outcome': { $in: ['booked', 'emergency'] } })).toBeNull();
    expect(filterProblem({ 'data.emergency': true })).toBeNull();
    expect(filterProblem({ data: { id: 'x' }, type: 'job.created' })).toBeNull();
    expect(
      filterProblem({
        $or: [
          { 'data.a': { $eq: 1, $ne: 2, $gt: 0, $gte: 0, $lt: 9, $lte: 9 } },
          { $nor: [{ 'data.b': { $nin: [1], $exists: true } }] },
        ],
      }),
    ).toBeNull();
  });

  it.each<[string, unknown, string]>([
    ['$where', { $where: 'this.data.outcome === "booked"' }, 'filter.$where is not a supported operator'],
    [
      '$function',
      { 'data.x': { $function: { body: 'return 1', args: [], lang: 'js' } } },
      'filter.data.x.$function is not a supported operator',
    ],
    ['$expr', { $expr: { $gt: ['$data.a', 1] } }, 'filter.$expr is not a supported operator'],
    ['$regex', { 'data.outcome': { $regex: 'book' } }, 'filter.data.outcome.$regex is not a supported operator'],
    [
      '$accumulator',
      { $and: [{ 'data.x': { $accumulator: {} } }] },
      'filter.$and.0.data.x.$accumulator is not a supported operator',
    ],
    ['an unknown operator', { 'data.x': { $foo: 1 } }, 'filter.data.x.$foo is not a supported operator'],
    [
      'an unknown operator under $not',
      { 'data.x': { $not: { $regex: 'a' } } },
      'filter.data.x.$not.$regex is not a supported operator',
    ],
    [
      'an operator hidden in a value',
      { 'data.x': { $in: [{ $where: '1' }] } },
      'filter.data.x.$in.0.$where is not a supported operator',
    ],
    [
      'a supported operator inside a value',
      { 'data.x': { a: { $gt: 1 } } },
      'filter.data.x.a.$gt is inside a value to compare',
    ],
    ['a field operator at the top', { $in: [1] }, 'filter.$in applies to a field'],
    ['$not at the top', { $not: { 'data.x': 1 } }, 'filter.$not applies to a field'],
    ['$or on a field', { 'data.x': { $or: [{ $eq: 1 }] } }, 'filter.data.x.$or combines conditions'],
    ['$in not an array', { 'data.outcome': { $in: 'booked' } }, 'filter.data.outcome.$in must be an array'],
    ['$nin not an array', { 'data.outcome': { $nin: { a: 1 } } }, 'filter.data.outcome.$nin must be an array'],
    ['$exists not a boolean', { 'data.x': { $exists: 1 } }, 'filter.data.x.$exists must be true or false'],
    ['$gt on an object', { 'data.x': { $gt: { a: 1 } } }, 'filter.data.x.$gt must be a number or a string'],
    ['$lte on null', { 'data.x': { $lte: null } }, 'filter.data.x.$lte must be a number or a string'],
    ['$and not an array', { $and: { 'data.x': 1 } }, 'filter.$and must be a non-empty array of conditions'],
    ['$or empty', { $or: [] }, 'filter.$or must be a non-empty array of conditions'],
    ['$nor of non-objects', { $nor: [1, 2] }, 'filter.$nor must be a non-empty array of conditions'],
    ['$not of a value', { 'data.x': { $not: 'a' } }, 'filter.data.x.$not must be an object of operators'],
    ['$not of fields', { 'data.x': { $not: { a: 1 } } }, 'filter.data.x.$not must be an object of operators'],
    ['operators mixed with fields', { 'data.x': { $gt: 1, a: 2 } }, 'filter.data.x mixes operators and fields'],
    ['a path outside the envelope', { id: 'evt_1' }, 'filter.id is not a path into the event'],
    ['a path into type', { 'type.length': 3 }, 'filter.type.length is not a path into the event'],
    ['an empty segment', { 'data..x': 1 }, 'filter.data..x is not a path into the event'],
    ['a prototype segment', { 'data.__proto__.x': 1 }, 'filter.data.__proto__.x is not a path into the event'],
    [
      'a nested path in a condition',
      { $or: [{ 'data.ok': true }, { shop_id: 'x' }] },
      'filter.$or.1.shop_id is not a path into the event',
    ],
    ['not an object', ['data.x'], 'filter must be an object'],
  ])('refuses %s, naming the key', (_name, filter, message) => {
    expect(filterProblem(filter)).toContain(message);
  });

  it('refuses a filter nested more than 8 levels deep, and accepts one of 8', () => {
    const nested = (levels: number): unknown => {
      // Each $and adds two levels (its array and the condition in it); the filter itself is level 1.
      let filter: unknown = { 'data.x': 1 };
      for (let level = 1; level < levels; level += 2) filter = { $and: [filter] };
      return filter;
    };
    expect(filterProblem(nested(7))).toBeNull(); // 7 levels
    // Levels: the filter, $and's array, its condition (×3: 7), the operators (8), $in's array (9).
    expect(filterProblem({ $and: [{ $and: [{ $and: [{ 'data.x': { $eq: 1 } }] }] }] })).toBeNull();
    expect(filterProblem({ $and: [{ $and: [{ $and: [{ 'data.x': { $in: [1] } }] }] }] })).toBe(
      'filter is nested more than 8 levels deep (at filter.$and.0.$and.0.$and.0.data.x.$in)',
    );
    // Far deeper than any stack would want to walk: refused all the same, at once.
    let deep: unknown = 1;
    for (let i = 0; i < 50_000; i++) deep = [deep];
    expect(filterProblem({ 'data.x': deep })).toMatch(/^filter is nested more than 8 levels deep/);
  });

  it('refuses a filter over 4 KiB as JSON, and accepts one of exactly 4 KiB', () => {
    const sized = (bytes: number) => {
      const empty = JSON.stringify({ 'data.x': '' }).length;
      return { 'data.x': 'a'.repeat(bytes - empty) };
    };
    expect(JSON.stringify(sized(FILTER_MAX_BYTES)).length).toBe(4096);
    expect(filterProblem(sized(FILTER_MAX_BYTES))).toBeNull();
    expect(filterProblem(sized(FILTER_MAX_BYTES + 1))).toBe('filter is 4097 bytes as JSON; at most 4096 (4 KiB)');
    // Bytes, not characters.
    expect(filterProblem({ 'data.x': 'é'.repeat(2045) })).toBe('filter is 4103 bytes as JSON; at most 4096 (4 KiB)');
  });
});

describe('filter in the endpoint request bodies', () => {
  const invalid = (schema: Parameters<typeof parseOrThrow>[0], body: unknown) => {
    try {
      parseOrThrow(schema, body);
    } catch (err) {
      return {
        code: (err as AppError).code,
        param: (err as AppError).options.param,
        message: (err as AppError).message,
      };
    }
    throw new Error('accepted');
  };

  it('is optional on create, may be null, and is kept as sent', () => {
    const base = { url: 'https://hooks.example.test/in', events: ['call.completed'] };
    expect(parseOrThrow(createWebhookEndpointBody, base).filter).toBeUndefined();
    expect(parseOrThrow(createWebhookEndpointBody, { ...base, filter: null }).filter).toBeNull();
    expect(parseOrThrow(createWebhookEndpointBody, { ...base, filter: { 'data.emergency': true } }).filter).toEqual({
      'data.emergency': true,
    });
  });

  it('is parameter_invalid with param "filter" and a message naming the key, on create and on PATCH', () => {
    const base = { url: 'https://hooks.example.test/in', events: ['call.completed'] };
    expect(invalid(createWebhookEndpointBody, { ...base, filter: { 'data.outcome': { $regex: 'b' } } })).toEqual({
      code: 'parameter_invalid',
      param: 'filter',
      message: expect.stringContaining('filter.data.outcome.$regex is not a supported operator'),
    });
    expect(invalid(updateWebhookEndpointBody, { filter: { $where: 'true' } })).toEqual({
      code: 'parameter_invalid',
      param: 'filter',
      message: expect.stringContaining('filter.$where is not a supported operator'),
    });
    expect(invalid(updateWebhookEndpointBody, { filter: 'data.x' })).toEqual({
      code: 'parameter_invalid',
      param: 'filter',
      message: expect.stringContaining('must be an object'),
    });
    // JSON.parse keeps a `__proto__` key as an own property: it is seen, and refused.
    expect(invalid(updateWebhookEndpointBody, JSON.parse('{"filter": {"__proto__": {"x": 1}}}'))).toEqual({
      code: 'parameter_invalid',
      param: 'filter',
      message: expect.stringContaining('filter.__proto__ is not a path into the event'),
    });
  });
});
