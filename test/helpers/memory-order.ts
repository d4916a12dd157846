import type { DeliveryRecord } from '../../shared/delivery/records';
import {
  elementOf,
  parseElement,
  type ChainMember,
  type ChainRef,
  type HoldResult,
  type OrderStore,
  type ReleaseResult,
} from '../../shared/delivery/resource-order';

const chainId = (c: ChainRef) => `${c.shop_id}/${c.endpoint_id}/${c.order_key}`;

/**
 * The chains and rows of ordered delivery in memory, with the table adapter's semantics
 * (shared/delivery/dynamo/resource-order.ts): sets answered sorted, a hold only while what it waits for
 * is in the chain and the row is pending, unattempted and not held, a release only of a held
 * pending row. `calls` records each request, for tests that count them.
 */
export function memoryOrder(rows: Map<string, DeliveryRecord> = new Map()) {
  const chains = new Map<string, Set<string>>();
  const calls: string[] = [];
  const list = (c: ChainRef) => [...(chains.get(chainId(c)) ?? [])].sort();
  const store: OrderStore = {
    async join(m: ChainMember) {
      calls.push(`join ${m.id}`);
      const set = chains.get(chainId(m)) ?? new Set();
      set.add(elementOf(m));
      chains.set(chainId(m), set);
      return list(m);
    },
    async leave(c, element) {
      calls.push(`leave ${parseElement(element).id}`);
      chains.get(chainId(c))?.delete(element);
      return list(c);
    },
    async read(c) {
      calls.push('read');
      return list(c);
    },
    async hold(m, ahead, sweepAt): Promise<HoldResult> {
      calls.push(`hold ${m.id}`);
      const row = rows.get(m.id);
      if (!row || row.attempts !== 0 || row.status !== 'pending' || row.held_by !== undefined)
        return row?.held_by !== undefined ? 'held' : 'moved';
      if (!chains.get(chainId(m))?.has(ahead)) return 'ahead_gone';
      rows.set(m.id, {
        ...row,
        held_by: parseElement(ahead).id,
        next_attempt_at: null,
        sweep_at: sweepAt.toISOString(),
      });
      return 'held';
    },
    async release(_c, element, now, sweepAt): Promise<ReleaseResult> {
      const { id } = parseElement(element);
      calls.push(`release ${id}`);
      const row = rows.get(id);
      if (!row || (row.status !== 'pending' && row.status !== 'retrying')) return 'ended';
      if (row.held_by === undefined || row.status !== 'pending') return 'open';
      const { held_by: _held, ...rest } = row;
      rows.set(id, { ...rest, next_attempt_at: now.toISOString(), sweep_at: sweepAt.toISOString() });
      return 'released';
    },
  };
  return { store, rows, chains, calls, list };
}
