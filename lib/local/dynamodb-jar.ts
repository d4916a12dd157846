import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * DynamoDB Local ships inside this npm package. It is fetched once with `npm pack` into a
 * cache outside the checkout, never installed as a dependency (347 MB with its deps).
 */
const PACKAGE = 'amplify-dynamodb-simulator@2.9.30';

export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return (
    env.DYNAMODB_LOCAL_CACHE ??
    join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'shop-calls-api', 'dynamodb-local-2.9.30')
  );
}

/** Returns the folder holding DynamoDBLocal.jar and DynamoDBLocal_lib, fetching it if absent. */
export function ensureDynamoDbLocal(env: NodeJS.ProcessEnv = process.env): string {
  const target = cacheDir(env);
  const emulator = join(target, 'emulator');
  if (existsSync(join(emulator, 'DynamoDBLocal.jar'))) return emulator;

  mkdirSync(target, { recursive: true });
  // Unpack into a scratch folder and rename into place, so a concurrent or interrupted
  // fetch never leaves a half-written emulator behind.
  const scratch = mkdtempSync(join(target, 'fetch-'));
  try {
    execFileSync('npm', ['pack', PACKAGE, '--silent', '--pack-destination', scratch], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const tarball = readdirSync(scratch).find((f) => f.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack ${PACKAGE} produced no tarball`);
    execFileSync('tar', ['-xzf', join(scratch, tarball), '-C', scratch, 'package/emulator']);
    if (!existsSync(emulator)) renameSync(join(scratch, 'package', 'emulator'), emulator);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return emulator;
}
