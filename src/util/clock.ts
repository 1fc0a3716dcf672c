/**
 * Time as an injected seam: anything that decides due-ness or ownership reads a Clock,
 * so tests can drive time and a cross-process store can share one notion of "now".
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  #nowMs: number;
  constructor(startMs = 1_700_000_000_000) {
    this.#nowMs = startMs;
  }
  now(): number {
    return this.#nowMs;
  }
  advance(ms: number): void {
    this.#nowMs += ms;
  }
  set(ms: number): void {
    this.#nowMs = ms;
  }
}
