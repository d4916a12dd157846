import { rmSync } from 'node:fs';
import { dirname } from 'node:path';

export default async function globalTeardown(): Promise<void> {
  await Promise.all((globalThis.__dynamodbLocals ?? []).map((e) => e.stop()));
  if (process.env.SECRETS_KEY_FILE) rmSync(dirname(process.env.SECRETS_KEY_FILE), { recursive: true, force: true });
}
