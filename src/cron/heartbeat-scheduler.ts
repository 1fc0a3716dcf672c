/**
 * The heartbeat clock: every `everyMs` it enqueues one background lane task for the heartbeat
 * session, unless the checklist is empty. It only enqueues: the lane queue decides when the
 * turn runs (after every waiting human, never in a reserved slot), coalesces a beat that is
 * still waiting with the next one, and the task itself is supplied by the gateway.
 */
import type { LaneQueue } from "../gateway/lanes/lane-queue.js";
import type { LaneTaskContext } from "../gateway/lanes/types.js";
import { type Clock, systemClock, type TimerHandle } from "../util/clock.js";
import type { Logger } from "../util/logger.js";

/** Options of {@link HeartbeatScheduler}. */
export interface HeartbeatSchedulerOptions {
  /** Time between beats, ms; at least 1. */
  everyMs: number;
  /** The session the heartbeat turns run in. */
  sessionKey: string;
  /** True when there is nothing to check (an empty HEARTBEAT.md): the beat is skipped. */
  isIdle(): Promise<boolean>;
  /** False outside `heartbeat.activeHours`: the beat is skipped. Default always true. */
  isActive?(now: number): boolean;
  lanes: Pick<LaneQueue, "enqueue" | "isBusy" | "pendingCount">;
  /** The heartbeat turn, run inside its lane. */
  run(ctx: LaneTaskContext): Promise<void>;
  logger: Logger;
  /** Time source and the beat timer (default `systemClock`). */
  clock?: Clock;
}

/** What one beat did. */
export type BeatOutcome =
  | "skipped_idle"
  | "skipped_inactive"
  | "skipped_busy"
  | "enqueued"
  | "coalesced"
  | "failed";

/** Fires beats on a fixed cadence (no drift: each is armed from the schedule, not the last run). */
export class HeartbeatScheduler {
  readonly #o: HeartbeatSchedulerOptions;
  readonly #clock: Clock;
  #timer: TimerHandle | undefined;
  #nextAtMs = 0;
  #stopped = true;

  /** @throws RangeError when `everyMs` is not a positive integer. */
  constructor(options: HeartbeatSchedulerOptions) {
    if (!Number.isInteger(options.everyMs) || options.everyMs < 1) {
      throw new RangeError(`HeartbeatScheduler: everyMs must be a positive integer, got ${options.everyMs}`);
    }
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
  }

  /** Arms the first beat `everyMs` from now. Idempotent. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#nextAtMs = this.#clock.now() + this.#o.everyMs;
    this.#arm();
  }

  /** No more beats; a beat already enqueued still runs (the lane queue owns it). */
  stop(): void {
    this.#stopped = true;
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** One beat now (also what the timer calls). Never throws: failures are logged. */
  async beat(): Promise<BeatOutcome> {
    const { logger } = this.#o;
    try {
      if (this.#o.isActive && !this.#o.isActive(this.#clock.now())) {
        logger.debug("heartbeat skipped: outside heartbeat.activeHours");
        return "skipped_inactive";
      }
      // At most one beat per session, ever: none is queued behind a running or waiting one.
      if (this.#o.lanes.isBusy(this.#o.sessionKey) || this.#o.lanes.pendingCount(this.#o.sessionKey) > 0) {
        logger.debug("heartbeat skipped: its session is busy");
        return "skipped_busy";
      }
      if (await this.#o.isIdle()) {
        logger.debug("heartbeat skipped: HEARTBEAT.md has nothing to check");
        return "skipped_idle";
      }
      const handle = this.#o.lanes.enqueue({
        sessionKey: this.#o.sessionKey,
        priority: "background",
        origin: "heartbeat",
        run: (ctx) => this.#o.run(ctx),
      });
      handle.done.catch((err: unknown) => logger.warn({ err }, "heartbeat turn did not finish"));
      return handle.coalesced ? "coalesced" : "enqueued";
    } catch (err) {
      logger.error({ err }, "heartbeat could not be scheduled");
      return "failed";
    }
  }

  #arm(): void {
    if (this.#stopped) return;
    const delayMs = Math.max(0, this.#nextAtMs - this.#clock.now());
    this.#timer = this.#clock.setTimeout(
      () => {
        this.#timer = undefined;
        // The next beat keeps the cadence; beats missed while the process slept are not replayed.
        const now = this.#clock.now();
        while (this.#nextAtMs <= now) this.#nextAtMs += this.#o.everyMs;
        void this.beat().finally(() => this.#arm());
      },
      delayMs,
      { unref: true },
    );
  }
}
