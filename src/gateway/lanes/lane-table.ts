/**
 * The live session lanes of one lane queue, by session key. A lane is created with its first
 * task and dropped once idle (at once, or `idleEvictMs` later on the clock), so memory does not
 * grow with the number of sessions ever seen.
 */
import type { Clock } from "../../util/clock.js";
import { SessionLane } from "./session-lane.js";

/** Session lanes by key, with idle eviction (see the file header). */
export class LaneTable {
  readonly #lanes = new Map<string, SessionLane>();
  readonly #clock: Clock;
  readonly #idleEvictMs: number;

  /** `idleEvictMs`: how long an idle lane is kept (0: dropped at once); checked by the caller. */
  constructor(clock: Clock, idleEvictMs: number) {
    this.#clock = clock;
    this.#idleEvictMs = idleEvictMs;
  }

  /** Live lanes. */
  get size(): number {
    return this.#lanes.size;
  }

  /** The session's lane, if it is live. */
  get(sessionKey: string): SessionLane | undefined {
    return this.#lanes.get(sessionKey);
  }

  /** A new, empty lane for a session that has none. */
  create(sessionKey: string): SessionLane {
    const lane = new SessionLane(sessionKey);
    this.#lanes.set(sessionKey, lane);
    return lane;
  }

  /** The lane gets work again: a pending idle drop is called off. */
  keep(lane: SessionLane): void {
    if (lane.idleTimer === undefined) return;
    this.#clock.clearTimeout(lane.idleTimer);
    lane.idleTimer = undefined;
  }

  /** Drops the lane if it is idle: at once, or after `idleEvictMs` if it is still idle then. */
  evictIfIdle(lane: SessionLane): void {
    if (!lane.idle || this.#lanes.get(lane.key) !== lane) return;
    if (this.#idleEvictMs === 0) this.#lanes.delete(lane.key);
    else if (lane.idleTimer === undefined) {
      lane.idleTimer = this.#clock.setTimeout(() => this.#onIdle(lane), this.#idleEvictMs, { unref: true });
    }
  }

  /** A snapshot of the live lanes (safe to evict from while iterating). */
  snapshot(): SessionLane[] {
    return [...this.#lanes.values()];
  }

  readonly #onIdle = (lane: SessionLane): void => {
    lane.idleTimer = undefined;
    if (lane.idle && this.#lanes.get(lane.key) === lane) this.#lanes.delete(lane.key);
  };
}
