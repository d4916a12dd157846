import { runtimeDeps, type Deps, type TableDeps } from './runtime';
import { secretCipherFromEnv } from './secrets/from-env';

const withCipher = new WeakMap<TableDeps, Deps>();

/**
 * `runtimeDeps()` plus the secret cipher (KMS in AWS, a key file locally), read on first
 * use. A module of its own so that only the functions that encrypt or decrypt secrets
 * bundle the KMS client.
 */
export function secretDeps(): Deps {
  const base = runtimeDeps();
  let deps = withCipher.get(base);
  if (!deps) {
    deps = {
      ...base,
      get cipher() {
        return secretCipherFromEnv();
      },
    };
    withCipher.set(base, deps);
  }
  return deps;
}
