/**
 * Recording what happened to a send (sent, retry, dead) when the store may fail: an outcome that
 * could not be written is logged and re-attempted on its own timer, with backoff, and its row
 * stays `sending` meanwhile — so a reply that was delivered is never sent again while the
 * process lives, and one that failed is never lost.
 */
import type { Clock, TimerHandle } from "../util/clock.js";
import type { Logger } from "../util/logger.js";

/** An outcome the store failed to record, re-attempted on its own timer. */
interface UnrecordedWrite {
  readonly outcome: "sent" | "retry" | "dead";
  readonly log: Logger;
  readonly write: (now: number) => Promise<void>;
  /** Runs once the write lands: the outcome's log line and metric. */
  readonly onRecorded: () => void;
  failures: number;
  timer: TimerHandle | undefined;
}

export interface OutcomeRecorderOptions {
  clock: Clock;
  /** Wait before re-attempt `n` (1 for the first). */
  backoffMs(n: number): number;
  /** After stop, a failed write is logged as left for the next start, not re-attempted. */
  isStopped(): boolean;
  /** An outcome landed after store failures (its chat's next row may be due now). */
  onLateRecord(): void;
}

/** Owns the outcome writes still waiting for the store (see the file header). */
export class OutcomeRecorder {
  readonly #o: OutcomeRecorderOptions;
  readonly #unrecorded = new Set<UnrecordedWrite>();

  constructor(options: OutcomeRecorderOptions) {
    this.#o = options;
  }

  /** Writes one outcome, then runs `onRecorded`; never throws. */
  async record(
    log: Logger,
    outcome: UnrecordedWrite["outcome"],
    write: (now: number) => Promise<void>,
    onRecorded: () => void,
  ): Promise<void> {
    await this.#attempt({ outcome, log, write, onRecorded, failures: 0, timer: undefined });
  }

  /** One last attempt for every write still waiting (at stop). */
  async flush(): Promise<void> {
    for (const unrecorded of [...this.#unrecorded]) {
      this.#o.clock.clearTimeout(unrecorded.timer);
      await this.#attempt(unrecorded);
    }
  }

  async #attempt(pending: UnrecordedWrite): Promise<void> {
    const { outcome, log } = pending;
    try {
      await pending.write(this.#o.clock.now());
    } catch (err) {
      pending.failures++;
      if (this.#o.isStopped()) {
        this.#unrecorded.delete(pending);
        log.error(
          { err, outcome, failures: pending.failures },
          outcome === "sent"
            ? "reply delivered but its receipt was not recorded before stop; it stays `sending` and is sent again after restart"
            : `could not record the ${outcome} before stop; the reply stays \`sending\` and is tried again after restart`,
        );
        return;
      }
      const retryInMs = this.#o.backoffMs(pending.failures);
      log.error(
        { err, outcome, failures: pending.failures, retryInMs },
        outcome === "sent"
          ? "reply delivered but its receipt could not be recorded; re-recording it (it will not be sent again)"
          : `could not record the ${outcome}; re-recording it`,
      );
      this.#unrecorded.add(pending);
      pending.timer = this.#o.clock.setTimeout(() => void this.#attempt(pending), retryInMs, { unref: true });
      return;
    }
    this.#unrecorded.delete(pending);
    pending.onRecorded();
    if (pending.failures > 0) {
      log.info({ outcome, failures: pending.failures }, "outbox outcome recorded after store failures");
      this.#o.onLateRecord();
    }
  }
}
