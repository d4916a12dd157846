import { randomBytes } from 'node:crypto';

/**
 * Encrypts small secrets (webhook signing secrets, idempotent responses that contain one)
 * under a key kept outside the table. `context` is bound into the ciphertext, so a value
 * copied onto another item does not decrypt; the key itself is bound to `shopId` (in AWS a
 * KMS data key per shop, under an encryption context naming it, which CloudTrail records).
 */
export interface SecretCipher {
  encrypt(plaintext: string, context: string, shopId: string): Promise<string>;
  decrypt(ciphertext: string, context: string, shopId: string): Promise<string>;
}

/** A Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. */
export const newSigningSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;
