import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DecryptCommand,
  GenerateDataKeyCommand,
  InvalidCiphertextException,
  KMSClient,
  NotFoundException,
} from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-jest';
import { newSigningSecret } from '../../shared/domain/secrets';
import { EnvelopeCipher } from '../../shared/secrets/envelope';
import { KmsDataKeys } from '../../shared/secrets/kms-data-keys';
import { LocalKeyFile } from '../../shared/secrets/local-key-file';

describe('signing secrets', () => {
  it('are whsec_ + base64 of 32 random bytes', () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(secret);
  });
});

describe('envelope cipher with a local key file', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'cipher-')), 'nested', 'secrets.key');
  const cipher = new EnvelopeCipher(new LocalKeyFile(path));

  it('round-trips, creates the key file 0600, and never writes the plaintext', async () => {
    const ciphertext = await cipher.encrypt('whsec_abc', 'ctx-1', 'shop_1');
    expect(ciphertext).not.toContain('whsec_abc');
    expect(await cipher.decrypt(ciphertext, 'ctx-1', 'shop_1')).toBe('whsec_abc');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(path, 'utf8'), 'base64')).toHaveLength(32);
  });

  it('refuses a ciphertext moved to another context, or altered', async () => {
    const ciphertext = await cipher.encrypt('whsec_abc', 'ctx-1', 'shop_1');
    await expect(cipher.decrypt(ciphertext, 'ctx-2', 'shop_1')).rejects.toThrow();
    const parts = ciphertext.split('.');
    parts[4] = Buffer.from('whsec_xyz').toString('base64url');
    await expect(cipher.decrypt(parts.join('.'), 'ctx-1', 'shop_1')).rejects.toThrow();
  });
});

describe('envelope cipher, decrypting the same value again', () => {
  /** One fixed key; counts how often a stored value's key is looked up (once per real decryption). */
  const counting = () => {
    const key = Buffer.alloc(32, 3);
    const keys = {
      resolved: 0,
      current: async () => ({ ref: 'k1', key }),
      resolve: async () => (keys.resolved++, key),
    };
    return keys;
  };

  it('decrypts a value once per context, and still refuses it in another context', async () => {
    const keys = counting();
    const cipher = new EnvelopeCipher(keys);
    const ciphertext = await cipher.encrypt('whsec_abc', 'ctx-1', 'shop_1');
    for (let i = 0; i < 3; i++) expect(await cipher.decrypt(ciphertext, 'ctx-1', 'shop_1')).toBe('whsec_abc');
    expect(keys.resolved).toBe(1);
    await expect(cipher.decrypt(ciphertext, 'ctx-2', 'shop_1')).rejects.toThrow();
    // A refused value is not remembered either.
    await expect(cipher.decrypt(ciphertext, 'ctx-2', 'shop_1')).rejects.toThrow();
    expect(keys.resolved).toBe(3);
  });

  it('keeps the 256 values last decrypted, dropping the oldest first', async () => {
    const keys = counting();
    const cipher = new EnvelopeCipher(keys);
    const values = await Promise.all(
      Array.from({ length: 257 }, (_, i) => cipher.encrypt(`secret-${i}`, 'c', 'shop_1')),
    );
    for (const v of values) await cipher.decrypt(v, 'c', 'shop_1');
    expect(keys.resolved).toBe(257);
    // The first was dropped when the 257th came in; the last 256 are still there.
    expect(await cipher.decrypt(values[256] as string, 'c', 'shop_1')).toBe('secret-256');
    expect(await cipher.decrypt(values[1] as string, 'c', 'shop_1')).toBe('secret-1');
    expect(keys.resolved).toBe(257);
    expect(await cipher.decrypt(values[0] as string, 'c', 'shop_1')).toBe('secret-0');
    expect(keys.resolved).toBe(258);
  });
});

describe('KMS data keys', () => {
  // KMS answered by aws-sdk-client-mock, as KMS behaves: a data key's blob decrypts only under the
  // encryption context it was generated with. Bytes, as the SDK hands them over.
  const plaintextKey = Buffer.alloc(32, 7);
  const blobFor = (context: Record<string, string> | undefined) =>
    Buffer.from(`encrypted-data-key:${JSON.stringify(context ?? {})}`);
  const mock = mockClient(KMSClient);
  const kmsDecrypt = async (input: { CiphertextBlob?: Uint8Array; EncryptionContext?: Record<string, string> }) => {
    if (Buffer.compare(Buffer.from(input.CiphertextBlob ?? []), blobFor(input.EncryptionContext)) !== 0)
      throw new InvalidCiphertextException({ message: 'context', $metadata: {} });
    return { Plaintext: new Uint8Array(plaintextKey), KeyId: 'k' };
  };
  beforeEach(() => {
    mock.reset();
    mock.on(GenerateDataKeyCommand).callsFake(async (input: { EncryptionContext?: Record<string, string> }) => ({
      Plaintext: new Uint8Array(plaintextKey),
      CiphertextBlob: new Uint8Array(blobFor(input.EncryptionContext)),
      KeyId: 'k',
    }));
    mock.on(DecryptCommand).callsFake(kmsDecrypt);
  });
  afterAll(() => mock.restore());
  const kms = () => new KMSClient({ region: 'eu-west-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
  const calls = (command: typeof GenerateDataKeyCommand | typeof DecryptCommand) =>
    mock
      .calls()
      .filter((c) => c.args[0] instanceof command)
      .map((c) => c.args[0].input as unknown as Record<string, unknown>);

  it('generates one data key and encrypts many values without calling KMS again', async () => {
    const cipher = new EnvelopeCipher(new KmsDataKeys(kms(), 'alias/webhooks'));
    const values = await Promise.all(
      Array.from({ length: 20 }, (_, i) => cipher.encrypt(`secret-${i}`, 'c', 'shop_1')),
    );
    expect(await cipher.decrypt(values[3] as string, 'c', 'shop_1')).toBe('secret-3');
    await cipher.encrypt('later', 'c', 'shop_1');
    expect(calls(GenerateDataKeyCommand)).toEqual([
      { KeyId: 'alias/webhooks', KeySpec: 'AES_256', EncryptionContext: { shop_id: 'shop_1' } },
    ]);
    expect(calls(DecryptCommand)).toHaveLength(0);
  });

  it('decrypts a stored data key once per container, then from cache', async () => {
    const writer = new EnvelopeCipher(new KmsDataKeys(kms(), 'k'));
    const stored = await writer.encrypt('whsec_x', 'c', 'shop_1');
    const reader = new EnvelopeCipher(new KmsDataKeys(kms(), 'k'));
    for (let i = 0; i < 5; i++) expect(await reader.decrypt(stored, 'c', 'shop_1')).toBe('whsec_x');
    expect(calls(DecryptCommand)).toHaveLength(1);
    expect(calls(DecryptCommand)[0]).toMatchObject({ KeyId: 'k', EncryptionContext: { shop_id: 'shop_1' } });
  });

  it('asks KMS again after a failed decrypt (a failure is not cached)', async () => {
    const stored = await new EnvelopeCipher(new KmsDataKeys(kms(), 'k')).encrypt('whsec_y', 'c', 'shop_1');
    const reader = new EnvelopeCipher(new KmsDataKeys(kms(), 'k'));
    let first = true;
    mock.on(DecryptCommand).callsFake(async (input: Parameters<typeof kmsDecrypt>[0]) => {
      if (!first) return kmsDecrypt(input);
      first = false;
      throw new NotFoundException({ message: 'no', $metadata: {} });
    });
    await expect(reader.decrypt(stored, 'c', 'shop_1')).rejects.toMatchObject({ name: 'NotFoundException' });
    expect(await reader.decrypt(stored, 'c', 'shop_1')).toBe('whsec_y');
  });

  it('rotates the data key after an hour', async () => {
    let now = 0;
    const cipher = new EnvelopeCipher(new KmsDataKeys(kms(), 'k', () => now));
    await cipher.encrypt('a', 'c', 'shop_1');
    now = 61 * 60 * 1000;
    await cipher.encrypt('b', 'c', 'shop_1');
    expect(calls(GenerateDataKeyCommand)).toHaveLength(2);
  });

  it("gives each shop its own data key, bound to it: a value of one shop never opens as another shop's, cached key or not", async () => {
    const cipher = new EnvelopeCipher(new KmsDataKeys(kms(), 'k'));
    const mine = await cipher.encrypt('whsec_a', 'c', 'shop_1');
    await cipher.encrypt('whsec_b', 'c', 'shop_2');
    expect(calls(GenerateDataKeyCommand).map((c) => c.EncryptionContext)).toEqual([
      { shop_id: 'shop_1' },
      { shop_id: 'shop_2' },
    ]);
    // This container holds shop_1's key already; asked for shop_2, it asks KMS, which refuses.
    await expect(cipher.decrypt(mine, 'c', 'shop_2')).rejects.toMatchObject({ name: 'InvalidCiphertextException' });
    expect(await cipher.decrypt(mine, 'c', 'shop_1')).toBe('whsec_a');
  });

  it('opens only its own format, and asks KMS for a data key only under the shop it is read for', async () => {
    const cipher = new EnvelopeCipher(new KmsDataKeys(kms(), 'k'));
    const sealed = await cipher.encrypt('whsec_a', 'c', 'shop_1');
    const other = ['v1', ...sealed.split('.').slice(1)].join('.');
    await expect(new EnvelopeCipher(new KmsDataKeys(kms(), 'k')).decrypt(other, 'c', 'shop_1')).rejects.toThrow(
      'unrecognised ciphertext',
    );
    expect(await new EnvelopeCipher(new KmsDataKeys(kms(), 'k')).decrypt(sealed, 'c', 'shop_1')).toBe('whsec_a');
    expect(calls(DecryptCommand).map((c) => c.EncryptionContext)).toEqual([{ shop_id: 'shop_1' }]);
  });
});
