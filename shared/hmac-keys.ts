import { createHash, createHmac, createSecretKey, type Hash, type Hmac, type KeyObject } from 'node:crypto';

/**
 * HMAC-SHA256 with its keys made into KeyObjects once. node:crypto turns a Buffer key into a
 * KeyObject on every `createHmac`, which on Node 24 costs about three times the HMAC of a
 * webhook body (39 µs against 10 µs here); the webhook signer and the SigV4 signer use the
 * same few keys for every request.
 */

const MAX_KEYS = 64;
/**
 * The keys made, least recently used first, each under a SHA-256 of its bytes: looked up by
 * content (an array changed after use can never map to its old key) and never by the secret
 * itself. Few keys are live in a container (its webhook secrets, SigV4's signing key of the
 * day and the secret it is derived from); at most 64 are kept, the least recently used going first.
 */
const made = new Map<string, KeyObject>();

/** The KeyObject for these key bytes (copied: the caller may reuse its buffer). */
export function hmacKey(bytes: Buffer): KeyObject {
  const id = createHash('sha256').update(bytes).digest('base64');
  let key = made.get(id);
  if (key) made.delete(id);
  else key = createSecretKey(Buffer.from(bytes));
  made.set(id, key);
  if (made.size > MAX_KEYS) made.delete(made.keys().next().value as string);
  return key;
}

const bytesOf = (data: string | ArrayBuffer | ArrayBufferView): Buffer =>
  typeof data === 'string' ? Buffer.from(data, 'utf8') : ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.from(data);

/**
 * The SHA-256 constructor @smithy/signature-v4 takes (its `sha256` option), as
 * @smithy/core's node:crypto one, with the key cache above.
 */
export class Sha256 {
  readonly digestLength = 32;
  private hash: Hash | Hmac;
  private finished = false;
  private readonly hmac: boolean;

  constructor(private readonly secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hmac = !!secret;
    this.hash = this.create();
  }

  update(data: string | ArrayBuffer | ArrayBufferView): void {
    if (this.finished) throw new Error('Attempted to update an already finished hash.');
    this.hash.update(typeof data === 'string' ? data : bytesOf(data));
  }

  digest(): Promise<Uint8Array> {
    let out: Buffer;
    if (!this.hmac) out = (this.hash as Hash).copy().digest();
    else {
      this.finished = true;
      out = this.hash.digest();
    }
    return Promise.resolve(new Uint8Array(out.buffer, out.byteOffset, out.byteLength));
  }

  reset(): void {
    this.hash = this.create();
    this.finished = false;
  }

  private create(): Hash | Hmac {
    if (!this.hmac || this.secret === undefined) return createHash('sha256');
    return createHmac('sha256', hmacKey(bytesOf(this.secret)));
  }
}
