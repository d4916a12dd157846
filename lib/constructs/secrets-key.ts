import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { ServiceFunction } from './function';

/**
 * The runtime seals every secret under the encryption context `{ shop_id: <shop> }`
 * (shared/secrets/kms-data-keys.ts), so a data key sealed for one shop opens only with that
 * shop's id, and CloudTrail names the shop on each call. The grants hold the runtime to that
 * form: a new data key and a Decrypt only with a `shop_id` context and no other key.
 */
const ONLY_SHOP_ID = {
  'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['shop_id'] },
  Null: { 'kms:EncryptionContext:shop_id': 'false' },
};

export function grantSealSecrets(fn: ServiceFunction, key: IKey): void {
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['kms:GenerateDataKey'],
      resources: [key.keyArn],
      conditions: ONLY_SHOP_ID,
    }),
  );
  grantOpenSecrets(fn, key);
}

export function grantOpenSecrets(fn: ServiceFunction, key: IKey): void {
  fn.addToRolePolicy(
    new PolicyStatement({ actions: ['kms:Decrypt'], resources: [key.keyArn], conditions: ONLY_SHOP_ID }),
  );
  fn.addEnvironment('SECRETS_KMS_KEY_ID', key.keyArn);
}
