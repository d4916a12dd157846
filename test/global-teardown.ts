import { rmSync } from 'node:fs';
import { dirname } from 'node:path';

export default async function globalTeardown(): Promise<void> {
  await globalThis.__dynamodbLocal?.stop();
  if (process.env.SECRETS_KEY_FILE) rmSync(dirname(process.env.SECRETS_KEY_FILE), { recursive: true, force: true });
}
