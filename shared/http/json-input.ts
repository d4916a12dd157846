/**
 * Checks of JSON input that need no schema (so no zod): the body middleware and every schema's
 * validation (./validation.ts) share them.
 */

/** What a JSON value is, for a message that says what was sent instead: "an array", "null". */
export function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** A value met in a walk of JSON, with the way back to the root. */
type JsonNode = { value: unknown; key: PropertyKey; parent: JsonNode | null };

// With the `u` flag a surrogate pair is one code point, so only a half without its pair matches.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * The first string in `data` (depth first, in order) that is not text the store and every
 * receiver can take: NUL, which C-based consumers read as the end of the string, or a lone
 * surrogate, which has no UTF-8 encoding. Object keys are not checked: a schema refuses a key it
 * does not know. A loop, not recursion: JSON may nest deeper than the call stack.
 */
export function unsafeText(data: unknown): { path: PropertyKey[]; problem: string } | null {
  const pending: JsonNode[] = [{ value: data, key: '', parent: null }];
  for (let node = pending.pop(); node; node = pending.pop()) {
    const { value } = node;
    if (typeof value === 'string') {
      const problem = value.includes('\u0000')
        ? 'must not contain NUL (U+0000)'
        : LONE_SURROGATE.test(value)
          ? 'must not contain a lone surrogate (U+D800 to U+DFFF): it is not Unicode text'
          : null;
      if (problem) return { path: pathOf(node), problem };
    } else if (value !== null && typeof value === 'object') {
      const entries: [PropertyKey, unknown][] = Array.isArray(value) ? [...value.entries()] : Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i] as [PropertyKey, unknown];
        pending.push({ value: child, key, parent: node });
      }
    }
  }
  return null;
}

function pathOf(node: JsonNode): PropertyKey[] {
  const path: PropertyKey[] = [];
  for (let at: JsonNode | null = node; at?.parent; at = at.parent) path.push(at.key);
  return path.reverse();
}
