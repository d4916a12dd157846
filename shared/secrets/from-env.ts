import { KMSClient } from '@aws-sdk/client-kms';
import type { SecretCipher } from '../domain/secrets';
import { EnvelopeCipher } from './envelope';
import { KmsDataKeys } from './kms-data-keys';
import { LocalKeyFile } from './local-key-file';

let cached: { config: string; cipher: SecretCipher } | undefined;

/** KMS in the cloud (SECRETS_KMS_KEY_ID), a key file locally (SECRETS_KEY_FILE). */
export function secretCipherFromEnv(env: NodeJS.ProcessEnv = process.env): SecretCipher {
  const kmsKeyId = env.SECRETS_KMS_KEY_ID;
  const keyFile = env.SECRETS_KEY_FILE;
  const config = `${kmsKeyId ?? ''}|${keyFile ?? ''}`;
  if (cached?.config === config) return cached.cipher;
  let cipher: SecretCipher;
  if (kmsKeyId) cipher = new EnvelopeCipher(new KmsDataKeys(new KMSClient({}), kmsKeyId));
  else if (keyFile) cipher = new EnvelopeCipher(new LocalKeyFile(keyFile));
  else throw new Error('Set SECRETS_KMS_KEY_ID (AWS) or SECRETS_KEY_FILE (local) to store webhook secrets');
  cached = { config, cipher };
  return cipher;
}
