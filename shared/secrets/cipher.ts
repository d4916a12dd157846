import type { KMSClient } from '@aws-sdk/client-kms';
import type { SecretsConfig } from '../config';
import type { SecretCipher } from '../domain/secrets';
import { EnvelopeCipher } from './envelope';
import { KmsDataKeys } from './kms-data-keys';
import { LocalKeyFile } from './local-key-file';

/** KMS in the cloud (the process's one KMS client, made only here), a key file locally. */
export function secretCipher(config: SecretsConfig, kms: () => KMSClient): SecretCipher {
  return new EnvelopeCipher(
    'kmsKeyId' in config ? new KmsDataKeys(kms(), config.kmsKeyId) : new LocalKeyFile(config.keyFile),
  );
}
