/**
 * What happens to turns and messages, as typed events: the turn runner and the router publish,
 * and whoever cares subscribes (answer waiters, the turn scheduler, the outbox, metrics), so no
 * component holds a late-bound reference to another.
 */
import type { TokenUsage } from "../harness/providers/types.js";
import type { RunRecord } from "../store/repos/run-repo.js";

/** Everything the bus carries. */
export type GatewayEvent =
  /** A turn's end was committed (answer or failure notice, with its replies). */
  | {
      type: "turn_committed";
      sessionKey: string;
      inboxIds: readonly number[];
      state: "answered" | "failed";
      replies: readonly string[];
      usage: TokenUsage;
      run: RunRecord;
    }
  /** The store would not save a turn; its messages stay unfinished and are redone after restart. */
  | { type: "turn_unsaved"; sessionKey: string; inboxIds: readonly number[] }
  /** A turn task ended (committed, unsaved, crashed or found nothing to do). */
  | { type: "turn_ended"; sessionKey: string }
  /** The gateway answered a message itself (a refusal, a pairing code, a command). */
  | { type: "message_rejected"; inboxId: number; replies: readonly string[] }
  /** Reply rows were committed for sending. */
  | { type: "replies_committed" }
  /** A running turn wrote events to its session's transcript (a tool call, a result). */
  | { type: "transcript_appended"; sessionKey: string };

export type GatewayEventListener = (event: GatewayEvent) => void;

/** A synchronous event bus; a throwing listener is reported, never breaks the publisher. */
export class GatewayEvents {
  readonly #listeners = new Set<GatewayEventListener>();
  readonly #onListenerError: (err: unknown, event: GatewayEvent) => void;

  constructor(onListenerError: (err: unknown, event: GatewayEvent) => void = () => {}) {
    this.#onListenerError = onListenerError;
  }

  /** Subscribes; returns the unsubscribe function. */
  on(listener: GatewayEventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(event: GatewayEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (err) {
        this.#onListenerError(err, event);
      }
    }
  }
}
