/**
 * Holding calls in the fake Bot API: a test can make the next calls of a method (or file
 * downloads) wait until it releases them, to freeze the system under test at an exact point
 * (an update fetched but not yet committed, an edit in flight) without sleeping. An `after`
 * hold lets the call be carried out and holds only its answer: the client cannot tell it worked.
 */
import type { ApiParams } from "./telegram-params.js";

/** What `holdMethod` returns. */
export interface MethodHold {
  /** How many calls are waiting now. */
  readonly waiting: number;
  /** How many calls were held so far (released or not). */
  readonly held: number;
  /**
   * Resolves once at least `count` (default 1) calls were held, at once if they already were;
   * rejects after `timeoutMs` (default 5000).
   */
  reached(count?: number, timeoutMs?: number): Promise<void>;
  /** Lets the waiting calls go on, in arrival order, and holds no more. Idempotent. */
  release(): void;
}

/** Which calls a hold applies to. */
export interface HoldOptions {
  /** How many calls it holds (default: every call until released). */
  times?: number;
  /** Only calls with this bot token (default: any bot). */
  token?: string;
  /**
   * Carry the call out (a message is stored, the call recorded) and hold only its answer until
   * release (default false: the call waits before it is carried out). A call that fails is
   * answered at once. Not for `getUpdates` or file downloads.
   */
  after?: boolean;
  /** Only calls whose parameters pass this test (default: every call of the method). */
  when?: (params: ApiParams) => boolean;
}

interface HoldState {
  method: string;
  token: string | undefined;
  after: boolean;
  when: ((params: ApiParams) => boolean) | undefined;
  remaining: number;
  held: number;
  released: boolean;
  waiting: Array<() => void>;
  watchers: Set<() => void>;
}

/** The active holds of a fake; `wait` is called for every request before it is handled. */
export class MethodHolds {
  readonly #holds: HoldState[] = [];

  /** Holds the next calls of `method` (case-insensitive; `downloadFile` for file downloads). */
  hold(method: string, options: HoldOptions = {}): MethodHold {
    const times = options.times ?? Number.POSITIVE_INFINITY;
    if (!(times >= 1)) throw new Error(`holdMethod: times must be ≥ 1, got ${options.times}`);
    const state: HoldState = {
      method: method.toLowerCase(),
      token: options.token,
      after: options.after ?? false,
      when: options.when,
      remaining: times,
      held: 0,
      released: false,
      waiting: [],
      watchers: new Set(),
    };
    this.#holds.push(state);
    return {
      get waiting() {
        return state.waiting.length;
      },
      get held() {
        return state.held;
      },
      reached: (count = 1, timeoutMs = 5000) =>
        new Promise<void>((resolve, reject) => {
          if (state.held >= count) return resolve();
          const timer = setTimeout(() => {
            state.watchers.delete(check);
            reject(
              new Error(`holdMethod(${method}): ${state.held} of ${count} calls held after ${timeoutMs} ms`),
            );
          }, timeoutMs);
          timer.unref();
          const check = () => {
            if (state.held < count) return;
            clearTimeout(timer);
            state.watchers.delete(check);
            resolve();
          };
          state.watchers.add(check);
        }),
      release: () => this.#release(state),
    };
  }

  /** Resolves when the call may proceed: at once unless an active (before) hold matches it. */
  wait(token: string, method: string, params: ApiParams = {}): Promise<void> {
    return this.#take(token, method, params, false) ?? Promise.resolve();
  }

  /**
   * For a call about to be carried out: when an active `after` hold matches it, the promise its
   * answer must wait for; else undefined (answer at once).
   */
  answerHold(token: string, method: string, params: ApiParams): Promise<void> | undefined {
    return this.#take(token, method, params, true);
  }

  #take(token: string, method: string, params: ApiParams, after: boolean): Promise<void> | undefined {
    const name = method.toLowerCase();
    const state = this.#holds.find(
      (h) =>
        !h.released &&
        h.remaining > 0 &&
        h.after === after &&
        h.method === name &&
        (h.token === undefined || h.token === token) &&
        (h.when === undefined || h.when(params)),
    );
    if (!state) return undefined;
    state.remaining -= 1;
    state.held += 1;
    const held = new Promise<void>((resolve) => state.waiting.push(resolve));
    for (const watcher of [...state.watchers]) watcher();
    return held;
  }

  /** Releases every hold (the fake is closing). */
  releaseAll(): void {
    for (const state of [...this.#holds]) this.#release(state);
  }

  #release(state: HoldState): void {
    state.released = true;
    const index = this.#holds.indexOf(state);
    if (index >= 0) this.#holds.splice(index, 1);
    for (const resume of state.waiting.splice(0)) resume();
  }
}
