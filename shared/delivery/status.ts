/** The statuses of a delivery row (docs/api.md, Deliveries). */
export const DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'failed', 'cancelled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Open: an attempt may still be made. */
export const OPEN_STATUSES: readonly DeliveryStatus[] = ['pending', 'retrying'];
export const isOpenStatus = (status: DeliveryStatus): boolean => OPEN_STATUSES.includes(status);
