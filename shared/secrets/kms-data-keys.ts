import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import type { DataKeyProvider } from './envelope';

const REUSE_MS = 60 * 60 * 1000;

/**
 * KMS envelope keys. A data key is generated once and reused for an hour; decrypted data
 * keys are cached for the life of the Lambda container, so a delivery costs no KMS call.
 */
export class KmsDataKeys implements DataKeyProvider {
  private currentKey: Promise<{ ref: string; key: Buffer; until: number }> | undefined;
  private readonly resolved = new Map<string, Promise<Buffer>>();

  constructor(
    private readonly kms: KMSClient,
    private readonly keyId: string,
    private readonly now: () => number = Date.now,
  ) {}

  async current() {
    // Concurrent callers share one GenerateDataKey call.
    if (!this.currentKey || (await this.currentKey.catch(() => ({ until: 0 }))).until <= this.now()) {
      this.currentKey = this.generate();
    }
    const { ref, key } = await this.currentKey;
    return { ref, key };
  }

  private async generate() {
    const out = await this.kms.send(new GenerateDataKeyCommand({ KeyId: this.keyId, KeySpec: 'AES_256' }));
    if (!out.Plaintext || !out.CiphertextBlob) throw new Error('KMS returned no data key');
    const ref = Buffer.from(out.CiphertextBlob).toString('base64url');
    const key = Buffer.from(out.Plaintext);
    this.resolved.set(ref, Promise.resolve(key));
    return { ref, key, until: this.now() + REUSE_MS };
  }

  resolve(ref: string): Promise<Buffer> {
    let key = this.resolved.get(ref);
    if (!key) {
      key = this.kms.send(new DecryptCommand({ CiphertextBlob: Buffer.from(ref, 'base64url'), KeyId: this.keyId })).then((out) => {
        if (!out.Plaintext) throw new Error('KMS returned no plaintext');
        return Buffer.from(out.Plaintext);
      });
      key.catch(() => this.resolved.delete(ref));
      this.resolved.set(ref, key);
    }
    return key;
  }
}
