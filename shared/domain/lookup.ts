import { notFound } from '../errors';
import { isId, type IdPrefix } from '../ids';

/** An id that is not even well-formed names nothing: it is missing like an unknown one, and is never looked up. */
export function requireId(prefix: IdPrefix, what: string, id: string): string {
  if (!isId(prefix, id)) throw notFound(what, id);
  return id;
}

/** Loads a resource by its id; a malformed id and an unknown one are the same missing resource. */
export async function findExisting<T>(
  prefix: IdPrefix,
  what: string,
  id: string,
  load: (id: string) => Promise<T | null>,
): Promise<T> {
  const found = await load(requireId(prefix, what, id));
  if (!found) throw notFound(what, id);
  return found;
}
