import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import type { DataKeyProvider } from './envelope';

const REUSE_MS = 60 * 60 * 1000;
/**
 * Shops whose current data key a container keeps (one KMS call per shop per hour); the least
 * recently used go first.
 */
const MAX_SHOPS = 1_000;
/** Decrypted data keys a container keeps: a few per shop it has served. */
const MAX_RESOLVED = 4_096;

/**
 * The encryption context of a shop's data keys: KMS decrypts a key only under the context it was
 * made with, and CloudTrail names the shop on every call.
 */
const contextOf = (shopId: string) => ({ shop_id: shopId });

/** A Map that drops its least recently used entry past `max`. */
function remember<V>(map: Map<string, V>, key: string, value: V, max: number): V {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as string);
  return value;
}

/**
 * KMS envelope keys, one data key per shop. A shop's data key is generated once and reused
 * for an hour; decrypted data keys are cached for the life of the Lambda container, so a
 * delivery costs no KMS call once its shop's key is known.
 */
export class KmsDataKeys implements DataKeyProvider {
  /**
   * Each shop's current key, and until when it is used (known before the key arrives, so concurrent
   * callers share one GenerateDataKey).
   */
  private readonly current_ = new Map<string, { key: Promise<{ ref: string; key: Buffer }>; until: number }>();
  private readonly resolved = new Map<string, Promise<Buffer>>();

  constructor(
    private readonly kms: KMSClient,
    private readonly keyId: string,
    private readonly now: () => number = Date.now,
  ) {}

  async current(shopId: string) {
    let entry = this.current_.get(shopId);
    if (!entry || entry.until <= this.now()) {
      const key = this.generate(shopId);
      entry = { key, until: this.now() + REUSE_MS };
      // A failed call is not kept: the next caller asks again.
      key.catch(() => this.current_.get(shopId)?.key === key && this.current_.delete(shopId));
    }
    return remember(this.current_, shopId, entry, MAX_SHOPS).key;
  }

  private async generate(shopId: string) {
    const out = await this.kms.send(
      new GenerateDataKeyCommand({ KeyId: this.keyId, KeySpec: 'AES_256', EncryptionContext: contextOf(shopId) }),
    );
    if (!out.Plaintext || !out.CiphertextBlob) throw new Error('KMS returned no data key');
    const ref = Buffer.from(out.CiphertextBlob).toString('base64url');
    const key = Buffer.from(out.Plaintext);
    remember(this.resolved, `${shopId}|${ref}`, Promise.resolve(key), MAX_RESOLVED);
    return { ref, key };
  }

  resolve(ref: string, shopId: string): Promise<Buffer> {
    // Under the shop it is asked for: a key cached for one shop is never handed out for another.
    const id = `${shopId}|${ref}`;
    let key = this.resolved.get(id);
    if (!key) {
      key = this.kms
        .send(
          new DecryptCommand({
            CiphertextBlob: Buffer.from(ref, 'base64url'),
            KeyId: this.keyId,
            EncryptionContext: contextOf(shopId),
          }),
        )
        .then((out) => {
          if (!out.Plaintext) throw new Error('KMS returned no plaintext');
          return Buffer.from(out.Plaintext);
        });
      key.catch(() => this.resolved.delete(id));
    }
    return remember(this.resolved, id, key, MAX_RESOLVED);
  }
}
