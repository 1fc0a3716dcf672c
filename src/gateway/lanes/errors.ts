/** The lane queue's error: a task that never ran, or whose run was aborted. */
import type { AbortReason } from "./types.js";

/** Thrown into `done` when a task never ran (queue shut down) or its run was aborted. */
export class LaneAbortedError extends Error {
  readonly reason: AbortReason;
  constructor(reason: AbortReason, message?: string) {
    super(message ?? `lane task aborted: ${reason}`);
    this.name = "LaneAbortedError";
    this.reason = reason;
  }
}
