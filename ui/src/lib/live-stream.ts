/**
 * A live SSE connection to the gateway that stays open: read with `fetch` and a streaming reader
 * (the Bearer header), reopened with backoff when it ends or fails, closed by {@link LiveStream.close}.
 * A 401 ends it for good (the page shows its login form).
 */
import { backoffDelayMs } from "../../../src/util/backoff.js";
import { type AdminApi, ApiError } from "./api.js";
import { type SseFrame, readSse } from "./sse-parser.js";

/** Options of {@link LiveStream}. */
export interface LiveStreamOptions {
  api: AdminApi;
  /** The path and query, e.g. "/v1/admin/events?logs=1". May change per attempt (a cursor). */
  path(): string;
  /** Extra request headers per attempt (e.g. `last-event-id`). */
  headers?(): Record<string, string>;
  /** Each frame, in order. */
  onFrame(frame: SseFrame): void;
  /** Told when the connection opens (true) and when it is lost (false). */
  onState?(connected: boolean): void;
  /** Told once when the route answers 404 (an older gateway); the stream then stops. */
  onMissing?(): void;
  /** Ceiling of the first reconnect wait (default 500 ms); doubles per failed attempt. */
  backoffBaseMs?: number;
  /** Cap of the reconnect wait (default 10,000 ms). */
  backoffMaxMs?: number;
  /** Default: setTimeout. */
  sleep?(ms: number, signal: AbortSignal): Promise<void>;
}

function defaultSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** One live stream; starts at construction. */
export class LiveStream {
  readonly #o: LiveStreamOptions;
  readonly #stop = new AbortController();
  readonly done: Promise<void>;

  constructor(options: LiveStreamOptions) {
    this.#o = options;
    this.done = this.#run().catch(() => {});
  }

  /** Closes the connection and stops reconnecting. Idempotent. */
  close(): void {
    this.#stop.abort();
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    const sleep = this.#o.sleep ?? defaultSleep;
    let failures = 0;
    while (!signal.aborted) {
      try {
        const res = await this.#o.api.request(
          this.#o.path(),
          { accept: "text/event-stream", headers: this.#o.headers?.() ?? {} },
          signal,
        );
        if (!res.body) throw new Error("no body");
        this.#o.onState?.(true);
        failures = 0;
        await readSse(res.body, (frame) => this.#o.onFrame(frame), signal);
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof ApiError && err.status === 401) return;
        if (err instanceof ApiError && err.status === 404) {
          this.#o.onMissing?.();
          return;
        }
      }
      if (signal.aborted) return;
      this.#o.onState?.(false);
      failures += 1;
      await sleep(
        backoffDelayMs(failures, {
          baseMs: this.#o.backoffBaseMs ?? 500,
          maxMs: this.#o.backoffMaxMs ?? 10_000,
        }),
        signal,
      );
    }
  }
}
