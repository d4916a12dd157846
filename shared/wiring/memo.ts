import { configFromEnv, type Config } from '../config';

const built = new WeakMap<Config, Map<object, unknown>>();

/**
 * The one cache of the wiring: what `part` builds from a config, built once per config.
 * A Lambda container has one config, so each client and store is made once per container;
 * a local stack makes its own config at every start, so two stacks never share a client.
 */
export function memo<T>(config: Config, part: object, build: () => T): T {
  let parts = built.get(config);
  if (!parts) built.set(config, (parts = new Map()));
  if (!parts.has(part)) parts.set(part, build());
  return parts.get(part) as T;
}

let processConfig: Config | undefined;

/** This process's config, from its environment, parsed once (at the first invocation). */
export const lambdaConfig = (): Config => (processConfig ??= configFromEnv());

type Part<T> = (config: Config) => T;

/**
 * A handler's default dependencies: the named parts of the wiring, built from this
 * process's config on first use. Each handler names only the parts it uses, so its bundle
 * holds only their clients.
 */
export function lambdaDeps<A>(a: Part<A>): () => A;
export function lambdaDeps<A, B>(a: Part<A>, b: Part<B>): () => A & B;
export function lambdaDeps<A, B, C>(a: Part<A>, b: Part<B>, c: Part<C>): () => A & B & C;
export function lambdaDeps<A, B, C, D>(a: Part<A>, b: Part<B>, c: Part<C>, d: Part<D>): () => A & B & C & D;
export function lambdaDeps(...parts: Part<object>[]): () => object {
  const merged = () =>
    memo(lambdaConfig(), merged, () => Object.assign({}, ...parts.map((part) => part(lambdaConfig()))) as object);
  return merged;
}
