import { notFound } from '../errors';
import { isId, type IdPrefix } from '../ids';

/** A path id that is not even well-formed is a 404 like a missing one, and is never looked up. */
export function requireId(prefix: IdPrefix, what: string, id: string): string {
  if (!isId(prefix, id)) throw notFound(what, id);
  return id;
}

/** Loads a resource by its path id; a malformed id and a miss are the same 404. */
export async function findOr404<T>(prefix: IdPrefix, what: string, id: string, load: (id: string) => Promise<T | null>): Promise<T> {
  const found = await load(requireId(prefix, what, id));
  if (!found) throw notFound(what, id);
  return found;
}
