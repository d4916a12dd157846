/** The statuses of a recovery (docs/api.md, Recover). */
export const RECOVERY_STATUSES = ['running', 'completed', 'cancelled'] as const;
export type RecoveryStatus = (typeof RECOVERY_STATUSES)[number];
