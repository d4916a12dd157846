import type { GuardPolicy } from './url-guard';

/**
 * TIME_SCALE (local stack only; default 1) multiplies the webhook clocks (retry offsets,
 * the 3-day auto-disable window, the 24-hour rotation grace) so a lifecycle can be
 * watched in seconds. The cloud stack never sets it.
 */
export function timeScale(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TIME_SCALE;
  if (raw === undefined || raw === '') return 1;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > 1) throw new Error(`TIME_SCALE must be a number in (0, 1], got '${raw}'`);
  return value;
}

export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

/** http:// and loopback targets only when the local stack says so; absent (off) in the cloud. */
export function guardPolicyFromEnv(env: NodeJS.ProcessEnv = process.env): GuardPolicy {
  return { allowInsecureLocal: env.WEBHOOK_ALLOW_INSECURE_LOCAL === 'true' };
}
