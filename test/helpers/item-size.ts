/**
 * An item's size as DynamoDB bills it (write units are per KB of it): each attribute's name and
 * value in UTF-8 bytes; a number about one byte per two significant digits plus one; null and
 * booleans one byte; a map or list 3 bytes plus one per element, its keys counted as names.
 */
export function itemSize(item: Record<string, unknown>): number {
  return Object.entries(item).reduce((n, [name, value]) => n + Buffer.byteLength(name) + valueSize(value), 0);
}

function valueSize(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') {
    const digits = String(Math.abs(value)).replace('.', '').replace(/^0+/, '').replace(/0+$/, '').length;
    return Math.ceil(Math.max(digits, 1) / 2) + 1;
  }
  if (Array.isArray(value)) return 3 + value.reduce((n: number, v) => n + 1 + valueSize(v), 0);
  if (value instanceof Set) return [...(value as Set<unknown>)].reduce((n: number, v) => n + valueSize(v), 0);
  return (
    3 +
    Object.entries(value as Record<string, unknown>).reduce(
      (n, [k, v]) => n + 1 + Buffer.byteLength(k) + valueSize(v),
      0,
    )
  );
}
