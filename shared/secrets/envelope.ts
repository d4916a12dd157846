import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretCipher } from '../domain/secrets';

/** Where data keys come from: a local key file, or KMS. `ref` identifies the key in the ciphertext. */
export interface DataKeyProvider {
  /** The key new values of this shop are encrypted with. */
  current(shopId: string): Promise<{ ref: string; key: Buffer }>;
  /** The key a stored value names, bound to `shopId`. */
  resolve(ref: string, shopId: string): Promise<Buffer>;
}

/** The envelope's format: `v2`, the data key is the shop's. */
const VERSION = 'v2';

/** Decrypted values a cipher keeps (a warm consumer signs with the same few endpoint secrets again and again). */
const REMEMBERED = 256;

/**
 * AES-256-GCM envelope: `v2.<key ref>.<iv>.<tag>.<ciphertext>`, all base64url.
 *
 * Decryption is remembered per (context, ciphertext), up to REMEMBERED values, the oldest
 * dropped first: the consumer decrypts the endpoint's secret for every delivery, and each
 * decryption (a cipher object, the key's checks, three base64 decodes) costs CPU under
 * load. The process holds the data keys in memory already, so this keeps nothing
 * there that it could not decrypt at once anyway. A rotated secret is a new ciphertext.
 */
export class EnvelopeCipher implements SecretCipher {
  private readonly remembered = new Map<string, string>();

  constructor(private readonly keys: DataKeyProvider) {}

  async encrypt(plaintext: string, context: string, shopId: string): Promise<string> {
    const { ref, key } = await this.keys.current(shopId);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      VERSION,
      ref,
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      body.toString('base64url'),
    ].join('.');
  }

  async decrypt(ciphertext: string, context: string, shopId: string): Promise<string> {
    const id = `${shopId}\n${context}\n${ciphertext}`;
    const known = this.remembered.get(id);
    if (known !== undefined) return known;
    const plaintext = await this.decryptNow(ciphertext, context, shopId);
    if (this.remembered.size >= REMEMBERED) this.remembered.delete(this.remembered.keys().next().value as string);
    this.remembered.set(id, plaintext);
    return plaintext;
  }

  private async decryptNow(ciphertext: string, context: string, shopId: string): Promise<string> {
    const [version, ref, iv, tag, body] = ciphertext.split('.');
    if (version !== VERSION || !ref || !iv || !tag || body === undefined) throw new Error('unrecognised ciphertext');
    const key = await this.keys.resolve(ref, shopId);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}
