import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';

const KeyId = () => process.env.SECRETS_KMS_KEY_ID;

/** The KMS client and one request of each of `operations` (a data key made, or opened). */
export async function callKms(operations: readonly string[]): Promise<void> {
  const kms = new KMSClient({});
  for (const operation of operations) {
    if (operation === 'GenerateDataKey')
      await kms.send(new GenerateDataKeyCommand({ KeyId: KeyId(), KeySpec: 'AES_256' }));
    else if (operation === 'Decrypt')
      await kms.send(
        new DecryptCommand({ KeyId: KeyId(), CiphertextBlob: Buffer.from(process.env.BENCH_KMS_BLOB ?? '', 'base64') }),
      );
    else throw new Error(`the KMS reference makes no ${operation} request`);
  }
}
