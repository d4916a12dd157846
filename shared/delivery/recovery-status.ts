/** The statuses of a recovery (docs/api.md, Managing an endpoint: Recover). */
export const RECOVERY_STATUSES = ['running', 'completed', 'cancelled'] as const;
export type RecoveryStatus = (typeof RECOVERY_STATUSES)[number];
