import { HEALTHY, type Admission } from '../../shared/delivery/circuit';

/** An admission that admits nothing and leaves everything empty, to be filled per case. */
export function emptyAdmission(fill: Partial<Admission> = {}): Admission {
  return {
    send: [],
    circuitOpen: [],
    defer: [],
    deferUntil: null,
    inFlight: [],
    inFlightUntil: null,
    elsewhere: [],
    carry: [],
    carryUntil: 0,
    expiredCarried: [],
    expired: [],
    health: HEALTHY,
    ...fill,
  };
}
