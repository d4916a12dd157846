import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
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
    const ciphertext = await cipher.encrypt('whsec_abc', 'ctx-1');
    expect(ciphertext).not.toContain('whsec_abc');
    expect(await cipher.decrypt(ciphertext, 'ctx-1')).toBe('whsec_abc');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(path, 'utf8'), 'base64')).toHaveLength(32);
  });

  it('refuses a ciphertext moved to another context, or altered', async () => {
    const ciphertext = await cipher.encrypt('whsec_abc', 'ctx-1');
    await expect(cipher.decrypt(ciphertext, 'ctx-2')).rejects.toThrow();
    const parts = ciphertext.split('.');
    parts[4] = Buffer.from('whsec_xyz').toString('base64url');
    await expect(cipher.decrypt(parts.join('.'), 'ctx-1')).rejects.toThrow();
  });
});

describe('KMS data keys', () => {
  const kms = mockClient(KMSClient);
  const plaintextKey = Buffer.alloc(32, 7);
  const blob = Buffer.from('encrypted-data-key');
  beforeEach(() => {
    kms.reset();
    kms.on(GenerateDataKeyCommand).resolves({ Plaintext: plaintextKey, CiphertextBlob: blob });
    kms.on(DecryptCommand).resolves({ Plaintext: plaintextKey });
  });

  it('generates one data key and encrypts many values without calling KMS again', async () => {
    const cipher = new EnvelopeCipher(new KmsDataKeys(new KMSClient({}), 'alias/webhooks'));
    const values = await Promise.all(Array.from({ length: 20 }, (_, i) => cipher.encrypt(`secret-${i}`, 'c')));
    expect(await cipher.decrypt(values[3] as string, 'c')).toBe('secret-3');
    await cipher.encrypt('later', 'c');
    expect(kms.commandCalls(GenerateDataKeyCommand)).toHaveLength(1);
    expect(kms.commandCalls(GenerateDataKeyCommand)[0]?.args[0].input).toEqual({ KeyId: 'alias/webhooks', KeySpec: 'AES_256' });
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(0);
  });

  it('decrypts a stored data key once per container, then from cache', async () => {
    const writer = new EnvelopeCipher(new KmsDataKeys(new KMSClient({}), 'k'));
    const stored = await writer.encrypt('whsec_x', 'c');
    const reader = new EnvelopeCipher(new KmsDataKeys(new KMSClient({}), 'k'));
    for (let i = 0; i < 5; i++) expect(await reader.decrypt(stored, 'c')).toBe('whsec_x');
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(1);
    expect(Buffer.from(kms.commandCalls(DecryptCommand)[0]?.args[0].input.CiphertextBlob as Uint8Array).toString()).toBe('encrypted-data-key');
  });

  it('rotates the data key after an hour', async () => {
    let now = 0;
    const cipher = new EnvelopeCipher(new KmsDataKeys(new KMSClient({}), 'k', () => now));
    await cipher.encrypt('a', 'c');
    now = 61 * 60 * 1000;
    await cipher.encrypt('b', 'c');
    expect(kms.commandCalls(GenerateDataKeyCommand)).toHaveLength(2);
  });
});
