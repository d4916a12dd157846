import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DataKeyProvider } from './envelope';

/**
 * The local stack's stand-in for KMS: one 256-bit key in a file outside the table
 * (created on first use, mode 0600). Losing the file makes stored secrets unreadable,
 * exactly as losing a KMS key would. One key for every shop: the shop binding is KMS's.
 */
export class LocalKeyFile implements DataKeyProvider {
  private key: Buffer | undefined;
  constructor(private readonly path: string) {}

  private load(): Buffer {
    if (this.key) return this.key;
    try {
      this.key = Buffer.from(readFileSync(this.path, 'utf8').trim(), 'base64');
    } catch {
      mkdirSync(dirname(this.path), { recursive: true });
      const fresh = randomBytes(32);
      // 'wx': if another process created it meanwhile, fail and read theirs.
      try {
        writeFileSync(this.path, fresh.toString('base64'), { mode: 0o600, flag: 'wx' });
        this.key = fresh;
      } catch {
        this.key = Buffer.from(readFileSync(this.path, 'utf8').trim(), 'base64');
      }
    }
    if (this.key.length !== 32) throw new Error(`${this.path} does not hold a 256-bit base64 key`);
    return this.key;
  }

  async current() {
    return { ref: 'local', key: this.load() };
  }

  async resolve(ref: string) {
    if (ref !== 'local') throw new Error(`value was encrypted under key '${ref}', not the local key file`);
    return this.load();
  }
}
