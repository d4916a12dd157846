/**
 * CPU time of processes and their descendants, from /proc (Linux): what each side of a
 * benchmark cost the machine, beside its wall-clock rate. On a 2-core machine the rates of
 * the consumer and the floor are bounded by the CPU they and DynamoDB Local share, so the
 * CPU ms each spends per delivery says where the difference goes. Elsewhere (no /proc) the
 * figures are null and the benchmark prints none.
 */
import { readFileSync } from 'node:fs';

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these ticks (100 per second on every mainstream kernel build). */
const TICKS_PER_SECOND = 100;

/** utime + stime of one process, in ms; null when it is gone or /proc is absent. */
function ownCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** A process and its living descendants, in CPU ms. */
export function treeCpuMs(pid: number): number | null {
  const own = ownCpuMs(pid);
  if (own === null) return null;
  return childrenOf(pid).reduce((sum, child) => sum + (treeCpuMs(child) ?? 0), own);
}
