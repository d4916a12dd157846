import type { AwsApi } from '../aws/aws-call';
import type { DataKeyProvider } from './envelope';

/** KMS's JSON carries binary fields (CiphertextBlob, Plaintext) as base64. */
interface KmsKeyAnswer {
  CiphertextBlob?: string;
  Plaintext?: string;
}

const REUSE_MS = 60 * 60 * 1000;

/**
 * KMS envelope keys. A data key is generated once and reused for an hour; decrypted data
 * keys are cached for the life of the Lambda container, so a delivery costs no KMS call.
 */
export class KmsDataKeys implements DataKeyProvider {
  private currentKey: Promise<{ ref: string; key: Buffer; until: number }> | undefined;
  private readonly resolved = new Map<string, Promise<Buffer>>();

  constructor(
    /** The KMS API (shared/aws/aws-call.ts, built with KMS). */
    private readonly kms: AwsApi,
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
    const out = await this.kms.call<KmsKeyAnswer>({ operation: 'GenerateDataKey', input: { KeyId: this.keyId, KeySpec: 'AES_256' } });
    if (!out.Plaintext || !out.CiphertextBlob) throw new Error('KMS returned no data key');
    const ref = Buffer.from(out.CiphertextBlob, 'base64').toString('base64url');
    const key = Buffer.from(out.Plaintext, 'base64');
    this.resolved.set(ref, Promise.resolve(key));
    return { ref, key, until: this.now() + REUSE_MS };
  }

  resolve(ref: string): Promise<Buffer> {
    let key = this.resolved.get(ref);
    if (!key) {
      key = this.kms
        .call<KmsKeyAnswer>({ operation: 'Decrypt', input: { CiphertextBlob: Buffer.from(ref, 'base64url').toString('base64'), KeyId: this.keyId } })
        .then((out) => {
          if (!out.Plaintext) throw new Error('KMS returned no plaintext');
          return Buffer.from(out.Plaintext, 'base64');
        });
      key.catch(() => this.resolved.delete(ref));
      this.resolved.set(ref, key);
    }
    return key;
  }
}
