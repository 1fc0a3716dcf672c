/**
 * Turns queued inbox rows into lane tasks, by `session.queueMode`: one task per message
 * (followup), or at most one waiting task per session that takes everything queued when it
 * starts (collect, steer). A lane task is only a wake-up: the inbox is the source of truth.
 */
import type { Store } from "../store/types.js";
import type { Logger } from "../util/logger.js";
import type { LaneQueue } from "./lanes/lane-queue.js";
import type { LaneOrigin, LanePriority } from "./lanes/types.js";
import { LaneAbortedError } from "./lanes/errors.js";
import type { TurnRunner } from "./turn-runner.js";
import { messageTurn } from "./turn-sources.js";

export type QueueMode = "followup" | "collect" | "steer";

export interface TurnSchedulerOptions {
  lanes: LaneQueue;
  turns: TurnRunner;
  store: Store;
  queueMode: QueueMode;
  logger: Logger;
  /** False while shutting down: no follow-up turns are scheduled. */
  isAccepting(): boolean;
}

/** Owns which message turns wait in the lanes (see the file header). */
export class TurnScheduler {
  readonly #o: TurnSchedulerOptions;
  /** Sessions with a collect/steer turn task waiting to start. */
  readonly #waitingTurn = new Set<string>();

  constructor(options: TurnSchedulerOptions) {
    this.#o = options;
  }

  /** Enqueues turn tasks for `messages` newly queued messages of a session. */
  schedule(sessionKey: string, priority: LanePriority, messages: number, origin: LaneOrigin = "user"): void {
    const mode = this.#o.queueMode;
    const tasks = mode === "followup" ? messages : this.#waitingTurn.has(sessionKey) ? 0 : 1;
    const source = messageTurn({ collectAll: mode !== "followup", steer: mode === "steer" });
    for (let i = 0; i < tasks; i++) {
      if (mode !== "followup") this.#waitingTurn.add(sessionKey);
      const handle = this.#o.lanes.enqueue({
        sessionKey,
        priority,
        origin,
        run: (ctx) => {
          this.#waitingTurn.delete(sessionKey);
          return this.#o.turns.run(sessionKey, source, ctx);
        },
      });
      handle.done.then(
        () => this.#afterTurn(sessionKey),
        (err: unknown) => {
          this.#waitingTurn.delete(sessionKey);
          if (err instanceof LaneAbortedError && err.reason === "shutdown") return;
          this.#o.logger.error(
            { err, sessionKey },
            "turn crashed; its messages stay queued for the next turn",
          );
          this.#afterTurn(sessionKey);
        },
      );
    }
  }

  /** Steered messages the run did not take, and anything else still queued, get a turn. */
  #afterTurn(sessionKey: string): void {
    if (!this.#o.isAccepting() || this.#o.queueMode === "followup") return;
    this.#o.store.inbox.sessionsWithQueued().then(
      (keys) => {
        if (keys.includes(sessionKey)) this.schedule(sessionKey, "human", 1);
      },
      (err: unknown) =>
        // The messages stay queued: the next message of the session, or a restart, runs them.
        this.#o.logger.error({ err, sessionKey }, "could not look for messages still queued after a turn"),
    );
  }
}
