import { DecryptCommand, KMSClient } from '@aws-sdk/client-kms';

/** The KMS client and one Decrypt of a data key, as a function opening a sealed secret makes. */
export async function decrypt(): Promise<void> {
  await new KMSClient({}).send(new DecryptCommand({ KeyId: process.env.SECRETS_KMS_KEY_ID, CiphertextBlob: Buffer.from(process.env.BENCH_KMS_BLOB ?? '', 'base64') }));
}
