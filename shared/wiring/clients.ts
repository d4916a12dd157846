import type { Config } from '../config';
import type { SecretCipher } from '../domain/secrets';
import { secretCipher } from '../secrets/cipher';
import { dynamo, type Dynamo } from '../store/client';
import { memo } from './memo';

/** The table's client, shared by every store a process builds from this config. */
export function dynamoOf(config: Config): Dynamo {
  return memo(config, dynamoOf, () => dynamo(config.table));
}

/** One cipher per config: KMS data keys are cached inside it, so a delivery costs no KMS call. */
export function cipherOf(config: Config): SecretCipher {
  return memo(config, cipherOf, () => secretCipher(config.secrets));
}
