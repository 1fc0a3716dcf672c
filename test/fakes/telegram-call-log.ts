/**
 * What the fake Bot API records and scripts about calls: the call log with `waitFor`, and the
 * FIFO of injected faults consumed by the next matching calls.
 */
import { BotApiError } from "./telegram-errors.js";
import type { FaultSpec, RecordedCall } from "./telegram-types.js";

interface CallWaiter {
  matches: (call: RecordedCall) => boolean;
  resolve: (call: RecordedCall) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** Every call, in order, and waiters for calls still to come. */
export class CallLog {
  /** The calls recorded so far; callers may read, not write. */
  readonly calls: RecordedCall[] = [];
  readonly #waiters = new Set<CallWaiter>();
  #closed = false;

  /** Appends a call and resolves the waiters it matches. */
  record(call: RecordedCall): void {
    this.calls.push(call);
    for (const waiter of [...this.#waiters]) if (waiter.matches(call)) waiter.resolve(call);
  }

  /**
   * The first call of `method` (case-insensitive) matching `predicate`, already recorded or
   * future. Rejects after `timeoutMs` listing the recent calls, or when the log closes.
   */
  waitFor(
    method: string,
    predicate: (call: RecordedCall) => boolean,
    timeoutMs: number,
  ): Promise<RecordedCall> {
    const matches = (call: RecordedCall) =>
      call.method.toLowerCase() === method.toLowerCase() && predicate(call);
    const existing = this.calls.find(matches);
    if (existing) return Promise.resolve(existing);
    if (this.#closed) return Promise.reject(new Error("FakeTelegramBotApi is closed"));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        const recent = this.calls
          .slice(-15)
          .map((c) => `  ${c.method} ${summarise(c.params)}`)
          .join("\n");
        const message = `waitFor("${method}") timed out after ${timeoutMs} ms; recent calls:\n${recent || "  (none)"}`;
        reject(new Error(message));
      }, timeoutMs);
      timer.unref();
      const waiter: CallWaiter = {
        matches,
        timer,
        reject,
        resolve: (call) => {
          clearTimeout(timer);
          this.#waiters.delete(waiter);
          resolve(call);
        },
      };
      this.#waiters.add(waiter);
    });
  }

  /** Rejects every pending waiter and clears its timer. */
  close(): void {
    this.#closed = true;
    for (const waiter of this.#waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error("FakeTelegramBotApi closed while waiting for a call"));
    }
    this.#waiters.clear();
  }
}

function summarise(params: Record<string, unknown>): string {
  // Buffer#toJSON runs before the replacer, so uploads arrive here as {type:"Buffer", data}.
  const text = JSON.stringify(params, (_key, value: unknown) =>
    typeof value === "object" && value !== null && "type" in value && value.type === "Buffer"
      ? "<bytes>"
      : value,
  );
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** Injected faults, FIFO; each answers `times` matching calls. */
export class FaultQueue {
  readonly #faults: Array<FaultSpec & { remaining: number }> = [];

  /** Queues a fault; fails on a non-error status or a bad `times`. */
  inject(fault: FaultSpec): void {
    const times = fault.times ?? 1;
    if (!Number.isInteger(times) || times < 1) {
      throw new Error(`injectFault: times must be a positive integer, got ${fault.times}`);
    }
    if (!Number.isInteger(fault.errorCode) || fault.errorCode < 400 || fault.errorCode > 599) {
      throw new Error(
        `injectFault: errorCode must be an HTTP error status (400-599), got ${fault.errorCode}`,
      );
    }
    this.#faults.push({ ...fault, remaining: times });
  }

  /** Consumes the oldest fault for this call, if any. @throws BotApiError the fault. */
  take(token: string, method: string): void {
    const index = this.#faults.findIndex(
      (f) => f.method.toLowerCase() === method.toLowerCase() && (f.token === undefined || f.token === token),
    );
    const fault = this.#faults[index];
    if (!fault) return;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.#faults.splice(index, 1);
    throw new BotApiError(fault.errorCode, fault.description, fault.parameters);
  }
}
