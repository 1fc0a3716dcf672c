/**
 * The Chat view's conversation, as `switchyard chat` has it (src/cli/chat.ts): each message is
 * `POST /v1/console` `{ sender, text, id }` read as a stream (`delta` events, then `done` or
 * `error`); the sender's mailbox (`GET /v1/console/events?sender=`) brings what arrives in the
 * background (cron, heartbeat, assignments), resumed by cursor after a reconnect. A mailbox reply
 * to one of this page's messages is held until that message's POST ends, and dropped if the POST
 * showed the answer (so nothing shows twice).
 */
import type { AdminApi } from "./api.js";
import { ApiError } from "./api.js";
import { LiveStream } from "./live-stream.js";
import { readSse } from "./sse-parser.js";

/** One line of the conversation. */
export interface ChatMessage {
  /** Unique in the conversation. */
  key: string;
  role: "you" | "agent" | "notice";
  text: string;
  /** For a background reply: what sent it ("cron", "heartbeat", …). */
  origin?: string;
  /** True while the answer streams. */
  pending?: boolean;
}

/** Options of {@link ConsoleChat}. */
export interface ConsoleChatOptions {
  api: AdminApi;
  /** The sender id (the page uses "ui"). */
  sender: string;
  /** Told the whole conversation after each change. */
  onChange(messages: readonly ChatMessage[]): void;
  /** Told whether the mailbox stream is open. */
  onConnected?(connected: boolean): void;
  /** Makes a client message id (default: random). */
  newId?(): string;
}

interface ReplyData {
  text?: unknown;
  origin?: unknown;
  replyTo?: unknown;
}

/** A random id that works without a secure context (crypto.randomUUID needs one). */
function randomId(): string {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return `ui-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** See the file header. Call {@link close} when the view goes. */
export class ConsoleChat {
  readonly #o: ConsoleChatOptions;
  #messages: ChatMessage[] = [];
  #after: number | undefined;
  /** Replies held per message id whose POST is still open. */
  readonly #held = new Map<string, ChatMessage[]>();
  /** Message ids whose answer the POST showed. */
  readonly #shown = new Set<string>();
  readonly #stream: LiveStream;
  #seq = 0;

  constructor(options: ConsoleChatOptions) {
    this.#o = options;
    const sender = encodeURIComponent(options.sender);
    this.#stream = new LiveStream({
      api: options.api,
      path: () => `/v1/console/events?sender=${sender}`,
      headers: (): Record<string, string> =>
        this.#after !== undefined ? { "last-event-id": String(this.#after) } : {},
      onFrame: (frame) => {
        const id = Number(frame.id);
        if (frame.id === undefined || !Number.isSafeInteger(id)) return;
        if (frame.event === "ready") this.#after = id;
        else if (frame.event === "reply" && (this.#after === undefined || id > this.#after)) {
          this.#after = id;
          this.#reply(id, frame.data);
        }
      },
      ...(options.onConnected ? { onState: options.onConnected } : {}),
      onMissing: () =>
        this.#add({
          role: "notice",
          text: "This gateway has no console channel: background messages cannot be shown.",
        }),
    });
  }

  /** The conversation so far. */
  get messages(): readonly ChatMessage[] {
    return this.#messages;
  }

  /** Stops following the mailbox. */
  close(): void {
    this.#stream.close();
  }

  /** Sends `text` and streams its answer into the conversation; resolves when the answer is complete. */
  async send(text: string): Promise<void> {
    const id = (this.#o.newId ?? randomId)();
    this.#held.set(id, []);
    this.#add({ role: "you", text });
    const answer = this.#add({ role: "agent", text: "", pending: true });
    let shown = false;
    try {
      const res = await this.#o.api.request("/v1/console", {
        body: { sender: this.#o.sender, text, id },
        accept: "text/event-stream",
      });
      if (!(res.headers.get("content-type") ?? "").includes("text/event-stream") || !res.body) {
        // 202: the answer takes longer than the gateway waits; it will come through the mailbox.
        await res.text().catch(() => "");
        this.#update(answer, { text: "(still working; the answer will appear here when it is ready)" });
      } else {
        let streamed = false;
        await readSse(res.body, (frame) => {
          const payload = JSON.parse(frame.data) as {
            text?: string;
            replies?: Array<{ text: string }>;
            error?: { message?: string };
          };
          if (frame.event === "delta" && payload.text) {
            streamed = true;
            this.#update(answer, { text: answer.text + payload.text });
          } else if (frame.event === "done") {
            shown = true;
            const replies = (payload.replies ?? []).map((r) => r.text);
            if (!streamed) this.#update(answer, { text: replies.join("\n\n") || "(no reply)" });
            else if (replies.length === 0) this.#update(answer, { text: `${answer.text}(no reply)` });
          } else if (frame.event === "error") {
            shown = true;
            this.#update(answer, { text: `(refused: ${payload.error?.message ?? "unknown"})` });
          }
        });
      }
    } catch (err) {
      const message =
        err instanceof ApiError && err.status === 404
          ? "this gateway has no console channel (enable channels.console)"
          : err instanceof Error
            ? err.message
            : String(err);
      this.#update(answer, { text: `(error: ${message})` });
    } finally {
      this.#update(answer, { pending: false });
      if (shown) this.#shown.add(id);
      const held = this.#held.get(id) ?? [];
      this.#held.delete(id);
      if (!shown) for (const m of held) this.#push(m);
    }
  }

  #reply(_cursor: number, data: string): void {
    let parsed: ReplyData;
    try {
      parsed = JSON.parse(data) as ReplyData;
    } catch {
      return;
    }
    const message: ChatMessage = {
      key: `m${++this.#seq}`,
      role: "agent",
      text: typeof parsed.text === "string" ? parsed.text : "",
      origin: typeof parsed.origin === "string" ? parsed.origin : "gateway",
    };
    const replyTo = typeof parsed.replyTo === "string" ? parsed.replyTo : undefined;
    if (replyTo !== undefined) {
      const held = this.#held.get(replyTo);
      if (held) return void held.push(message);
      if (this.#shown.has(replyTo)) return;
    }
    this.#push(message);
  }

  #add(m: Omit<ChatMessage, "key">): ChatMessage {
    const message = { ...m, key: `m${++this.#seq}` };
    this.#push(message);
    return message;
  }

  #push(message: ChatMessage): void {
    this.#messages = [...this.#messages, message];
    this.#o.onChange(this.#messages);
  }

  /** Replaces `message` by a copy with `patch` (the caller's reference is updated in place too). */
  #update(message: ChatMessage, patch: Partial<ChatMessage>): void {
    Object.assign(message, patch);
    this.#messages = this.#messages.map((m) => (m.key === message.key ? { ...message } : m));
    this.#o.onChange(this.#messages);
  }
}
