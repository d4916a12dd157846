/** A page request as the domain sees it: `after` is an opaque store position. */
export interface PageRequest {
  limit: number;
  after?: Record<string, unknown>;
}

export interface Page<T> {
  items: T[];
  /** Position after the last item; absent on the last page. */
  next?: Record<string, unknown>;
}

export function mapPage<A, B>(page: Page<A>, fn: (item: A) => B): Page<B> {
  return { items: page.items.map(fn), next: page.next };
}
