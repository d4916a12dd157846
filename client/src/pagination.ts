/**
 * A list call is a promise of its first page and, like stripe-node's auto-pagination, an async
 * iterable over every item to the end of the list. The first page is asked for once, when first
 * awaited or iterated, so `await list` then `for await (… of list)` costs no second request.
 */

export interface Page<Item> {
  data: Item[];
  has_more: boolean;
  next_cursor: string | null;
}

/** Fetches one page: the first one when `cursor` is undefined. */
export type FetchPage<P> = (cursor: string | undefined) => Promise<P>;

/** Bounds toArray so that a list longer than expected never fills memory. */
export const TO_ARRAY_MAX = 10_000;

export class ListPromise<Item, P extends Page<Item> = Page<Item>> implements PromiseLike<P>, AsyncIterable<Item> {
  #first: Promise<P> | undefined;

  constructor(private readonly fetchPage: FetchPage<P>) {}

  #firstPage(): Promise<P> {
    this.#first ??= this.fetchPage(undefined);
    return this.#first;
  }

  then<A = P, B = never>(
    onFulfilled?: ((page: P) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#firstPage().then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<P | B> {
    return this.#firstPage().catch(onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<P> {
    return this.#firstPage().finally(onFinally);
  }

  /** Every page, from the first, following `next_cursor` until it is null (a page may be empty before then). */
  async *pages(): AsyncGenerator<P, void, undefined> {
    let page = await this.#firstPage();
    yield page;
    while (page.next_cursor) {
      page = await this.fetchPage(page.next_cursor);
      yield page;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** At most `limit` items, from the start of the list; asks for no page beyond the one that fills it. */
  async toArray(options: { limit: number }): Promise<Item[]> {
    const limit = options?.limit;
    if (!Number.isInteger(limit) || limit < 1 || limit > TO_ARRAY_MAX) {
      throw new RangeError(`toArray needs a limit, an integer from 1 to ${TO_ARRAY_MAX}: iterate for more`);
    }
    const items: Item[] = [];
    for await (const item of this) {
      items.push(item);
      if (items.length >= limit) break;
    }
    return items;
  }
}
