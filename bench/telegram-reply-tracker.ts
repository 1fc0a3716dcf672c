/**
 * Pushes private-chat messages into a {@link FakeTelegramBotApi} and matches every `sendMessage`
 * the bot makes to the message it answers (same chat, `reply_parameters.message_id`). A reply to
 * nothing pushed, or a second reply to one message, is a problem the benchmark fails on.
 */
import type { FakeTelegramBotApi, RecordedCall } from "../test/fakes/telegram-bot-api.js";

interface Pending {
  chatId: number;
  messageId: number;
  pushedAtMs: number;
  resolve: (latencyMs: number) => void;
  reject: (error: Error) => void;
}

/** Options for {@link TelegramReplyTracker}. */
export interface TelegramReplyTrackerOptions {
  telegram: FakeTelegramBotApi;
  token: string;
  /** The clock the fake was built with (`now`), so push and call times compare; in ms. */
  now: () => number;
  /** How long the tracker watches `sendMessage` calls, in ms; past it, replies go unseen. */
  watchMs: number;
}

/** Matches pushed messages to their replies; see the file header. */
export class TelegramReplyTracker {
  readonly #o: TelegramReplyTrackerOptions;
  readonly #pending = new Map<string, Pending>();
  readonly #answered = new Set<string>();
  readonly #problems: string[] = [];
  #failure: Error | undefined;

  constructor(options: TelegramReplyTrackerOptions) {
    this.#o = options;
    // The call log has no listener API; a waiter whose predicate never matches sees every
    // sendMessage call synchronously as the fake records it, with no polling and no rescans.
    options.telegram
      .waitFor(
        "sendMessage",
        (call) => {
          this.#onSend(call);
          return false;
        },
        options.watchMs,
      )
      .catch(() => undefined); // Ends by timeout or when the fake closes; both are expected.
  }

  /** Replies matched so far. */
  get answered(): number {
    return this.#answered.size;
  }

  /** Stray and duplicate replies seen so far, one line each. */
  get problems(): readonly string[] {
    return this.#problems;
  }

  /** Messages pushed and not yet answered, as `chat:message` keys. */
  unanswered(): string[] {
    return [...this.#pending.keys()];
  }

  /**
   * Pushes `text` from the user whose id is `chatId` in that private chat. Resolves with the ms
   * from the push to the fake receiving the `sendMessage` that answers it; rejects on {@link fail}.
   */
  push(chatId: number, text: string): Promise<number> {
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      const pushedAtMs = this.#o.now();
      const { messageId } = this.#o.telegram.pushMessage(this.#o.token, {
        chat: { id: chatId, type: "private" },
        from: { id: chatId, first_name: `User ${chatId}` },
        text,
      });
      this.#pending.set(key(chatId, messageId), { chatId, messageId, pushedAtMs, resolve, reject });
    });
  }

  /** Rejects every waiting push, and every later one, with `error`. */
  fail(error: Error): void {
    this.#failure ??= error;
    for (const p of this.#pending.values()) p.reject(error);
  }

  #onSend(call: RecordedCall): void {
    if (call.token !== this.#o.token) return;
    const chatId = Number(call.params.chat_id);
    const replyTo = replyToId(call.params.reply_parameters);
    const k = key(chatId, replyTo ?? Number.NaN);
    const pending = this.#pending.get(k);
    if (!pending) {
      const why = this.#answered.has(k) ? "duplicate reply to" : "reply to no pushed message:";
      this.#problems.push(`${why} chat ${chatId} message ${replyTo ?? "(none)"}`);
      return;
    }
    this.#pending.delete(k);
    this.#answered.add(k);
    pending.resolve(call.timeMs - pending.pushedAtMs);
  }
}

function key(chatId: number, messageId: number): string {
  return `${chatId}:${messageId}`;
}

/** `reply_parameters.message_id`, whether the parameter arrived as JSON or as a JSON string. */
function replyToId(value: unknown): number | undefined {
  let parsed = value;
  if (typeof value === "string") {
    try {
      parsed = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (typeof parsed !== "object" || parsed === null || !("message_id" in parsed)) return undefined;
  const id = Number(parsed.message_id);
  return Number.isInteger(id) ? id : undefined;
}
