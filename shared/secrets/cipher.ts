import { KMSClient } from '@aws-sdk/client-kms';
import type { SecretsConfig } from '../config';
import type { SecretCipher } from '../domain/secrets';
import { EnvelopeCipher } from './envelope';
import { KmsDataKeys } from './kms-data-keys';
import { LocalKeyFile } from './local-key-file';

/** KMS in the cloud, a key file locally. */
export function secretCipher(config: SecretsConfig): SecretCipher {
  return new EnvelopeCipher('kmsKeyId' in config ? new KmsDataKeys(new KMSClient({}), config.kmsKeyId) : new LocalKeyFile(config.keyFile));
}
