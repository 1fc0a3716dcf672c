/**
 * What `switchyard chat` shows besides the answers to what is typed: the sender's mailbox,
 * followed over `GET /v1/console/events` (SSE). A cron answer, a heartbeat alert or an
 * assignment's report addressed to the person at the terminal is printed when it arrives. When
 * the gateway goes away (a restart) the follower reconnects with backoff and resumes from the
 * last event it saw (`Last-Event-ID`), so what arrived meanwhile is printed first, in order,
 * each once. Replies to the terminal's own messages, already printed from their POST, are not
 * printed again.
 */
import { backoffDelayMs } from "../util/backoff.js";
import { type Clock, systemClock } from "../util/clock.js";
import type { FoundGateway } from "./find-gateway.js";
import { GatewayRequestError, requestGateway } from "./gateway-client.js";
import { readSseFrames } from "./sse-frames.js";

/** One reply from the mailbox, as it is printed. */
export interface FollowedReply {
  /** Its mailbox cursor. */
  id: number;
  text: string;
  /** What sent it: "cron", "heartbeat", "wake", "assignment", "user" (a reply), "gateway", … */
  origin: string;
}

/** Options of {@link MailboxFollower}. */
export interface MailboxFollowerOptions {
  found: Pick<FoundGateway, "url" | "token" | "clientConfig">;
  /** The mailbox stream's path, e.g. "/v1/console/events". */
  path: string;
  sender: string;
  /** Shows one reply; called in mailbox order, once per reply. */
  print(reply: FollowedReply): void;
  /** Shows one line about the connection (lost, back, unsupported). */
  note(line: string): void;
  /**
   * The cursor to start after (what an earlier chat saw last): what arrived since is shown
   * first. Default: none, the stream starts at the mailbox's end.
   */
  after?: number;
  /** Told each new cursor (the `ready` event's, then each reply's), to be saved for the next chat. */
  onCursor?(after: number): void;
  /** Default: the system clock. */
  clock?: Clock;
  /** Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** Ceiling of the first reconnect wait (default 250 ms); doubles per failed attempt. */
  backoffBaseMs?: number;
  /** Cap of the reconnect wait (default 5,000 ms). */
  backoffMaxMs?: number;
}

/** The `data` of a `reply` event (the gateway's MailboxEventData). */
interface ReplyData {
  text?: unknown;
  origin?: unknown;
  replyTo?: unknown;
}

/**
 * Owns the mailbox connection of one chat: its cursor, its reconnects, the replies held back
 * while the terminal's own message is being answered, and the ids of the messages whose answers
 * were already printed.
 */
export class MailboxFollower {
  readonly #o: MailboxFollowerOptions;
  readonly #clock: Clock;
  readonly #stop = new AbortController();
  /** The last cursor seen (from `ready` or a `reply`); undefined until the first connection. */
  #after: number | undefined;
  /** Replies that arrived while a message of this terminal was being answered. */
  #held: Array<FollowedReply & { replyTo?: string }> | undefined;
  /** Client ids of this terminal's messages whose answers it printed from their POST. */
  readonly #printed = new Set<string>();
  #loop: Promise<void> | undefined;

  constructor(options: MailboxFollowerOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#after = options.after;
  }

  /**
   * Starts following; resolves once the first connection is open (so anything sent from then
   * on is shown) or has failed, or after `readyTimeoutMs`, whichever comes first.
   */
  async start(readyTimeoutMs: number): Promise<void> {
    let ready: () => void = () => {};
    const opened = new Promise<void>((resolve) => {
      ready = resolve;
    });
    this.#loop = this.#run(ready).catch((err: unknown) =>
      this.#o.note(`background messages stopped: ${(err as Error).message}`),
    );
    const timer = this.#clock.setTimeout(ready, readyTimeoutMs, { unref: true });
    await opened;
    this.#clock.clearTimeout(timer);
  }

  /** Stops following and waits for the connection to close. Idempotent. */
  async stop(): Promise<void> {
    this.#stop.abort(new Error("chat ended"));
    await this.#loop;
  }

  /** A message of this terminal is being answered: hold what arrives until {@link release}. */
  hold(): void {
    this.#held ??= [];
  }

  /**
   * The message with client id `clientId` is finished; `printed` says whether its answer was
   * printed from its POST (then the same replies in the mailbox are skipped). Prints what was held.
   */
  release(clientId: string, printed: boolean): void {
    if (printed) this.#printed.add(clientId);
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const reply of held) this.#show(reply);
  }

  /** Prints a reply (or skips one already printed from its POST), or holds it; the cursor saved is the last one shown. */
  #show(reply: FollowedReply & { replyTo?: string }): void {
    if (this.#held) {
      this.#held.push(reply);
      return;
    }
    if (reply.replyTo === undefined || !this.#printed.has(reply.replyTo)) {
      const { replyTo: _, ...shown } = reply;
      this.#o.print(shown);
    }
    this.#o.onCursor?.(reply.id);
  }

  async #run(ready: () => void): Promise<void> {
    const signal = this.#stop.signal;
    let failures = 0;
    while (!signal.aborted) {
      let problem = "the connection ended";
      try {
        const query = `?sender=${encodeURIComponent(this.#o.sender)}`;
        const res = await requestGateway(this.#o.found, `${this.#o.path}${query}`, {
          headers: {
            accept: "text/event-stream",
            ...(this.#after !== undefined ? { "last-event-id": String(this.#after) } : {}),
          },
          signal,
          ...(this.#o.fetch ? { fetch: this.#o.fetch } : {}),
        });
        if (res.status === 404) {
          await res.body?.cancel();
          ready();
          this.#o.note("this gateway does not send background messages (it is older than this client)");
          return;
        }
        if (!res.ok || !res.body) {
          await res.body?.cancel();
          throw new Error(`the gateway answered ${res.status}`);
        }
        for await (const frame of readSseFrames(res.body as AsyncIterable<Uint8Array>)) {
          const id = Number(frame.id);
          if (frame.id === undefined || !Number.isSafeInteger(id)) continue;
          if (frame.event === "ready") {
            // The cursor sent, or the mailbox's end when that was beyond it (another database).
            this.#after = id;
            if (!this.#held?.length) this.#o.onCursor?.(id);
            ready();
            if (failures > 0) this.#o.note("connected again");
            failures = 0;
          } else if (frame.event === "reply" && (this.#after === undefined || id > this.#after)) {
            this.#after = id;
            const data = JSON.parse(frame.data) as ReplyData;
            this.#show({
              id,
              text: typeof data.text === "string" ? data.text : "",
              origin: typeof data.origin === "string" ? data.origin : "gateway",
              ...(typeof data.replyTo === "string" ? { replyTo: data.replyTo } : {}),
            });
          }
        }
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof GatewayRequestError && err.kind === "unauthorized") {
          ready();
          throw err;
        }
        problem = err instanceof Error ? err.message : String(err);
      }
      if (signal.aborted) return;
      ready(); // a first attempt that failed: the chat goes on, and this keeps trying
      failures += 1;
      if (failures === 1) this.#o.note(`lost the gateway (${problem}); reconnecting`);
      const waitMs = backoffDelayMs(failures, {
        baseMs: this.#o.backoffBaseMs ?? 250,
        maxMs: this.#o.backoffMaxMs ?? 5_000,
      });
      await this.#clock.sleep(waitMs, signal).catch(() => {});
    }
  }
}
