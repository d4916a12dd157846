import { HEALTHY, type Admission, type EndpointHealth } from '../../shared/delivery/circuit';
import { planEndpoint, type Source } from '../../shared/delivery/endpoint-plan';
import { emptyAdmission as admission } from '../helpers/admission';

const lease = { token: 't', taken: 0, until: 1_000, probe: false };

const kinds = (ids: string[], a: Admission | null, source: Source, backlogMarked = false) =>
  planEndpoint(ids, { admission: a, backlogMarked }, source).actions.map((x) => `${x.deliveryId}:${x.kind}`);

describe('an endpoint plan: one action per due delivery', () => {
  it('cancels every delivery of an endpoint disabled or gone, whatever their source', () => {
    for (const source of ['queue', 'table'] as const)
      expect(planEndpoint(['a', 'b'], null, source)).toEqual({
        actions: [
          { kind: 'cancel', deliveryId: 'a' },
          { kind: 'cancel', deliveryId: 'b' },
        ],
        markBacklog: false,
      });
  });

  it('defers queue messages when every admission lost its race, and leaves pulled rows due', () => {
    expect(kinds(['a'], null, 'queue')).toEqual(['a:defer']);
    expect(kinds(['a'], null, 'table')).toEqual(['a:leave-due']);
  });

  it('gives each reason its own action, with the wait it asks for', () => {
    const a = admission({
      send: [{ deliveryId: 's', lease }],
      circuitOpen: ['c'],
      defer: ['d'],
      deferUntil: 500,
      rateLimited: [{ deliveryId: 'r', at: 700 }],
      inFlight: ['i'],
      inFlightUntil: 900,
      elsewhere: ['e'],
    });
    expect(
      planEndpoint(['s', 'c', 'd', 'r', 'i', 'e'], { admission: a, backlogMarked: true }, 'queue').actions,
    ).toEqual([
      { kind: 'send', deliveryId: 's', lease },
      { kind: 'record-not-sent', deliveryId: 'c' },
      { kind: 'defer', deliveryId: 'd', until: 500 },
      { kind: 'wait-for-rate', deliveryId: 'r', at: 700 },
      { kind: 'in-flight', deliveryId: 'i', until: 900 },
      { kind: 'defer', deliveryId: 'e', until: null },
    ]);
  });

  it('leaves due every pulled row it does not send or record', () => {
    const a = admission({
      send: [{ deliveryId: 's', lease }],
      circuitOpen: ['c'],
      defer: ['d'],
      rateLimited: [{ deliveryId: 'r', at: 700 }],
      inFlight: ['i'],
      elsewhere: ['e'],
    });
    expect(kinds(['s', 'c', 'd', 'r', 'i', 'e'], a, 'table')).toEqual([
      's:send',
      'c:record-not-sent',
      'd:leave-due',
      'r:leave-due',
      'i:leave-due',
      'e:leave-due',
    ]);
  });

  it('keeps what the admission carried in the batch, for the slots its runs free', () => {
    const a = admission({ send: [{ deliveryId: 's', lease }], defer: ['d1', 'd2'], carry: ['d1', 'd2'] });
    for (const source of ['queue', 'table'] as const)
      expect(planEndpoint(['s', 'd1', 'd2'], { admission: a, backlogMarked: false }, source)).toEqual({
        actions: [
          { kind: 'send', deliveryId: 's', lease },
          { kind: 'wait-in-run', deliveryId: 'd1' },
          { kind: 'wait-in-run', deliveryId: 'd2' },
        ],
        markBacklog: false,
      });
  });

  it('marks the backlog only when a healthy endpoint puts deliveries back on the queue for a slot, once', () => {
    const over = admission({ defer: ['d'] });
    const failing: EndpointHealth = { ...HEALTHY, consecutive_failures: 1 };
    const mark = (a: Admission, source: Source, marked = false) =>
      planEndpoint(['d'], { admission: a, backlogMarked: marked }, source).markBacklog;
    expect(mark(over, 'queue')).toBe(true);
    expect(mark(over, 'queue', true)).toBe(false);
    expect(mark(over, 'table')).toBe(false);
    expect(mark(admission({ defer: ['d'], health: failing }), 'queue')).toBe(false);
    expect(mark(admission({ elsewhere: ['d'] }), 'queue')).toBe(false);
    expect(mark(admission({ rateLimited: [{ deliveryId: 'd', at: 1 }] }), 'queue')).toBe(false);
  });
});
