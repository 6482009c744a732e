/** Time as a port, so tests can move it (subscription periods, link expiry, retention). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
