import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { InvokeStore, InvokeStoreBase } from '@aws/lambda-invoke-store';
import type { Context } from 'aws-lambda';
import { lambdaContext } from './lambda-events';

type Store = Record<string | symbol, unknown>;

/**
 * Lambda's InvokeStore for a process that runs many invocations at once, as the runtime of
 * Lambda Managed Instances provides it: each invocation's state in its own AsyncLocalStorage
 * context, which Powertools' Logger and Metrics use when AWS_LAMBDA_MAX_CONCURRENCY is set
 * (the invocation's Lambda context, appended keys, log level, stored metrics).
 *
 * Unlike the package's own multi-invocation store, code outside any invocation (the local
 * event sources' own lines, a test calling the domain directly) does not throw: it shares one
 * process-wide state, as every line of a Lambda that runs one invocation at a time does.
 */
class LocalInvokeStore extends InvokeStoreBase {
  readonly #invocations = new AsyncLocalStorage<Store>();
  readonly #outside: Store = {};

  getContext(): Store | undefined {
    return this.#invocations.getStore();
  }
  hasContext(): boolean {
    return this.#invocations.getStore() !== undefined;
  }
  get<T = unknown>(key: string | symbol): T | undefined {
    return (this.#invocations.getStore() ?? this.#outside)[key] as T | undefined;
  }
  set<T = unknown>(key: string | symbol, value: T): void {
    if (this.isProtectedKey(key)) throw new Error(`Cannot modify protected Lambda context field: ${String(key)}`);
    (this.#invocations.getStore() ?? this.#outside)[key] = value;
  }
  run<T>(context: Store, fn: () => T): T {
    return this.#invocations.run(context, fn);
  }
}

/**
 * Makes this process one whose invocations overlap, for Powertools: the store, and the variable
 * that tells Powertools to use it. Idempotent. It replaces any store already there: in a local
 * process that can only be one the AWS SDK made lazily for one invocation at a time. Needed
 * before Powertools is used wherever the variable is set, which a process started by a local
 * stack inherits (./lambda-runtime.ts).
 */
export function installInvokeStore(): LocalInvokeStore {
  const lambda = (globalThis as { awslambda?: { InvokeStore?: InvokeStoreBase } }).awslambda ?? {};
  (globalThis as { awslambda?: unknown }).awslambda = lambda;
  if (!(lambda.InvokeStore instanceof LocalInvokeStore)) {
    lambda.InvokeStore = new LocalInvokeStore();
    // The AWS SDK asks the package for the store at its first request. Asked now, before the
    // variable is set, the package settles on this one at once; asked later, it would first make
    // its own for many invocations with a dynamic import, which jest's CommonJS refuses.
    void InvokeStore.getInstanceAsync();
  }
  // Powertools and the SDK only ask whether it is set: the local stack has no fixed bound.
  if (!process.env.AWS_LAMBDA_MAX_CONCURRENCY) process.env.AWS_LAMBDA_MAX_CONCURRENCY = '1000';
  return lambda.InvokeStore as LocalInvokeStore;
}

/** One invocation, as Lambda's runtime makes it: its own InvokeStore context, and the handler given its Context. */
export function invoke<E, R>(
  handler: (event: E, context: Context) => Promise<R>,
  event: E,
  context: Context,
): Promise<R> {
  return installInvokeStore().run({ [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: context.awsRequestId }, () =>
    handler(event, context),
  );
}

/**
 * A function as an event source sees it: every call an invocation of its own, named `functionName`,
 * with a fresh request id, and `timeoutMs` (its Lambda timeout) left when it starts.
 */
export function localFunction<E, R>(
  functionName: string,
  handler: (event: E, context: Context) => Promise<R>,
  timeoutMs?: number,
): (event: E) => Promise<R> {
  return (event) => invoke(handler, event, lambdaContext(functionName, randomUUID(), timeoutMs));
}
