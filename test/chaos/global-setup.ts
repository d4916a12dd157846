/**
 * The e2e-chaos project's run: one LOCAL_CHAOS value for every stack its files start, printed
 * here and again at the end (./global-teardown.ts) so a failure can be replayed with it (each file mixes its path
 * into the seed: ./env.ts). It is
 * passed on as E2E_LOCAL_CHAOS, not LOCAL_CHAOS: the workers are shared with the other projects,
 * and only this project's files turn chaos mode on (./env.ts).
 */
import { randomInt } from 'node:crypto';

export default function chaosGlobalSetup(): void {
  process.env.E2E_LOCAL_CHAOS = process.env.LOCAL_CHAOS || `seed:${randomInt(0, 2 ** 31)}`;
  console.log(`\n${chaosRunLine()}`);
}

export function chaosRunLine(): string {
  const value = process.env.E2E_LOCAL_CHAOS ?? '';
  return `e2e-chaos: LOCAL_CHAOS=${value} (replay: LOCAL_CHAOS=${value} npx jest --selectProjects e2e-chaos [file])`;
}
