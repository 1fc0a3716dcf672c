/**
 * Wakes: rows the agent queues to run one of its sessions again later, as background work, with
 * a reason as the prompt (`schedule_wake`). Durable, so they survive restarts; claiming one is a
 * conditional update only one process wins. Bounded per session: not more often than once a
 * minute apart, at most `maxPending` waiting.
 */
import type { ChatTarget } from "../../channels/types.js";

/** One wake. */
export interface Wake {
  id: number;
  sessionKey: string;
  dueAt: number;
  reason: string;
  /** Where its answer goes (the chat it was scheduled from), or null: nowhere. */
  target: ChatTarget | null;
  state: "pending" | "fired" | "cancelled";
  createdAt: number;
  firedAt: number | null;
}

/** What `add` refused, or the wake it made. */
export type WakeAdd =
  | { status: "created"; wake: Wake }
  | { status: "too_many"; pending: number }
  | { status: "too_close"; other: Wake };

/** The wakes (see the file header). */
export interface WakeRepo {
  /**
   * Queues a wake unless its session already has `maxPending` waiting, or one within `minGapMs`
   * of `dueAt` (checked and written in one step).
   */
  add(
    wake: { sessionKey: string; dueAt: number; reason: string; target: ChatTarget | null },
    limits: { maxPending: number; minGapMs: number },
    now: number,
  ): Promise<WakeAdd>;
  /** A session's pending wakes, soonest first. */
  list(sessionKey: string): Promise<Wake[]>;
  /** Cancels a pending wake of `sessionKey`; false when there is none with that id. */
  cancel(id: number, sessionKey: string): Promise<boolean>;
  /** Pending wakes due at or before `now`, soonest first. */
  due(now: number, limit: number): Promise<Wake[]>;
  /** The soonest pending wake's time, or undefined. */
  nextDue(): Promise<number | undefined>;
  /** Moves a pending wake to fired; undefined when another process (or a cancel) got there first. */
  claim(id: number, now: number): Promise<Wake | undefined>;
}
