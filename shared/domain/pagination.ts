/** A page request as the domain sees it: `after` is an opaque store position. */
export interface PageRequest {
  limit: number;
  after?: Record<string, unknown>;
}

/** A list's bounds in time (epoch ms, each exclusive): on creation, and for jobs on the last change. */
export interface TimeFilter {
  createdAfter?: number;
  createdBefore?: number;
  updatedAfter?: number;
}

export interface Page<T> {
  items: T[];
  /** Position after the last item; absent on the last page. */
  next?: Record<string, unknown>;
}

export function mapPage<A, B>(page: Page<A>, fn: (item: A) => B): Page<B> {
  return { items: page.items.map(fn), next: page.next };
}
