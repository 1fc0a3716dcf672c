/**
 * The Slack send path. Markdown is rendered as mrkdwn chunks; each chunk is posted into its
 * thread with message metadata (`switchyard_reply`, the outbox row's idempotency key), so a row
 * whose earlier send may have arrived is first looked up in the conversation's recent history
 * and recorded instead of posted twice (`findSent`). A 429 blocks its method until Retry-After
 * has passed, for every chat; a conversation that is gone, a revoked token or a missing scope is
 * permanent. While a run works a status shows: the assistant thread status where the app has
 * it, else a reaction on the message being answered. With `streaming: edit` a preview message
 * is edited as the text arrives, then becomes the reply's first chunk.
 */
import type { webApi } from "@slack/bolt";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import { ChannelSendError } from "../errors.js";
import { type PreviewApi, StreamingPreviews } from "../preview.js";
import type { ChatTarget, OutboundMessage, SendReceipt } from "../types.js";
import { type SlackFailure, toSendError, toSlackFailure } from "./errors.js";
import { markdownToMrkdwn, renderSlackChunks } from "./format.js";
import type { SlackIdentity } from "./inbound.js";
import type { BotThreads } from "./slack-intake.js";

/** The metadata event type every reply carries. */
export const REPLY_EVENT_TYPE = "switchyard_reply";

export interface SlackSenderOptions {
  accountId: string;
  maxMessageChars: number;
  streaming: "off" | "edit";
  workingStatus: "auto" | "reaction" | "off";
  workingReaction: string;
  /** Least time between two edits of a streaming preview (default 1 s). */
  previewEditIntervalMs?: number;
  /** Messages read per page when looking a reply up (default 200), and pages at most (default 3). */
  lookupPageSize?: number;
  lookupPages?: number;
  threads: BotThreads;
  clock: Clock;
  logger: Logger;
  client(): webApi.WebClient | undefined;
  me(): SlackIdentity | undefined;
}

type Target = ChatTarget & { replyTo?: string };

/** A status shown while a run works, to clear when it ends. */
type WorkingStatus = { kind: "assistant"; threadTs: string } | { kind: "reaction"; ts: string };

/** Sends, looks up, edits, statuses and previews for one Slack app (see the file header). */
export class SlackSender {
  readonly #o: SlackSenderOptions;
  readonly #previews: StreamingPreviews;
  /** Until when each Web API method is rate limited (epoch ms). */
  readonly #blocked = new Map<string, number>();
  readonly #working = new Map<string, WorkingStatus>();
  /** Whether `assistant.threads.setStatus` works for this app (unknown until tried). */
  #assistant: boolean | undefined;
  #warnedNoHistory = false;

  constructor(options: SlackSenderOptions) {
    this.#o = options;
    const previewApi = this.#previewApi();
    this.#previews = new StreamingPreviews({
      api: () => (options.client() ? previewApi : undefined),
      editIntervalMs: options.previewEditIntervalMs ?? 1_000,
      maxChars: options.maxMessageChars,
      clock: options.clock,
      logger: options.logger,
    });
  }

  prepare(markdown: string): string[] {
    return renderSlackChunks(markdown, this.#o.maxMessageChars);
  }

  async send(message: OutboundMessage, _signal?: AbortSignal): Promise<SendReceipt> {
    const client = this.#client();
    const channel = message.chatId;
    const metadata = { event_type: REPLY_EVENT_TYPE, event_payload: { key: message.idempotencyKey } };
    const preview = await this.#previews.take(message);
    try {
      if (preview) {
        const updated = await this.#call("chat.update", () =>
          client.chat.update({ channel, ts: preview.messageId, text: message.text, metadata }),
        ).then(
          () => true,
          (err: unknown) => {
            if (toSlackFailure(err).kind === "message_gone") return false; // deleted: post anew
            throw err;
          },
        );
        preview.done();
        if (updated) return this.#sent(message, preview.messageId);
      }
      const res = await this.#call("chat.postMessage", () =>
        client.chat.postMessage({
          channel,
          text: message.text,
          ...(message.threadId ? { thread_ts: message.threadId } : {}),
          metadata,
          unfurl_links: false,
          unfurl_media: false,
        }),
      );
      return this.#sent(message, res.ts ?? "");
    } catch (err) {
      const sendError = this.#toSendError(err, channel);
      if (preview && !sendError.retryable) preview.done();
      throw sendError;
    }
  }

  /**
   * Looks the reply up by its idempotency key among the bot's messages in its thread (or the
   * channel) since shortly before the row was created: a bounded read of at most
   * `lookupPages` pages. Without the history scope it cannot tell; it says so once and lets
   * the row be posted (at least once, as on platforms without lookups).
   */
  async findSent(message: OutboundMessage, _signal?: AbortSignal): Promise<SendReceipt | undefined> {
    const client = this.#client();
    const me = this.#o.me();
    const channel = message.chatId;
    const createdAt = Number.parseInt(message.idempotencyKey.split("-").at(-1) ?? "", 36);
    const oldest = Number.isFinite(createdAt) ? ((createdAt - 120_000) / 1000).toFixed(6) : undefined;
    const limit = this.#o.lookupPageSize ?? 200;
    let cursor: string | undefined;
    try {
      for (let page = 0; page < (this.#o.lookupPages ?? 3); page++) {
        const common = {
          channel,
          limit,
          include_all_metadata: true,
          ...(oldest ? { oldest } : {}),
          ...(cursor ? { cursor } : {}),
        };
        const res = message.threadId
          ? await this.#call("conversations.replies", () =>
              client.conversations.replies({ ...common, ts: message.threadId as string }),
            )
          : await this.#call("conversations.history", () => client.conversations.history(common));
        const found = (res.messages ?? []).find(
          (m) =>
            m.metadata?.event_type === REPLY_EVENT_TYPE &&
            (m.metadata.event_payload as { key?: unknown } | undefined)?.key === message.idempotencyKey &&
            (!me || m.bot_id === me.botId || m.user === me.userId),
        );
        if (found?.ts) return { platformMessageId: `${channel}:${found.ts}` };
        cursor = res.response_metadata?.next_cursor || undefined;
        if (!res.has_more || !cursor) return undefined;
      }
      return undefined;
    } catch (err) {
      const f = toSlackFailure(err);
      if (f.kind === "missing_scope") {
        if (!this.#warnedNoHistory) {
          this.#warnedNoHistory = true;
          this.#o.logger.warn(
            { needed: f.needed },
            "cannot look up sent replies (missing history scope): a reply interrupted mid-send may be posted twice",
          );
        }
        return undefined;
      }
      throw this.#toSendError(err, channel);
    }
  }

  async edit(target: ChatTarget, platformMessageId: string, text: string): Promise<void> {
    const client = this.#client();
    const ts = tsOf(platformMessageId);
    await this.#call("chat.update", () => client.chat.update({ channel: target.chatId, ts, text }));
  }

  /** Shows the working status once per turn (refreshes are free); best effort. */
  async typing(target: Target): Promise<void> {
    if (this.#o.workingStatus === "off") return;
    const key = statusKey(target);
    if (this.#working.has(key)) return;
    const client = this.#o.client();
    if (!client) return;
    const threadTs = target.threadId;
    if (this.#o.workingStatus === "auto" && threadTs && this.#assistant !== false) {
      try {
        await this.#call("assistant.threads.setStatus", () =>
          client.assistant.threads.setStatus({
            channel_id: target.chatId,
            thread_ts: threadTs,
            status: "is thinking…",
          }),
        );
        this.#assistant = true;
        this.#working.set(key, { kind: "assistant", threadTs });
        return;
      } catch (err) {
        if (this.#assistant === undefined)
          this.#o.logger.info(
            { err: toSlackFailure(err).description },
            "Slack assistant status unavailable for this app; showing a reaction while a run works",
          );
        this.#assistant = false;
      }
    }
    const ts = target.replyTo ? tsOf(target.replyTo) : undefined;
    if (!ts) return;
    this.#working.set(key, { kind: "reaction", ts });
    await this.#call("reactions.add", () =>
      client.reactions.add({ channel: target.chatId, timestamp: ts, name: this.#o.workingReaction }),
    ).catch((err: unknown) => {
      if (toSlackFailure(err).code !== "already_reacted") throw err;
    });
  }

  /** Clears the turn's working status. */
  async typingDone(target: Target): Promise<void> {
    const key = statusKey(target);
    const status = this.#working.get(key);
    this.#working.delete(key);
    const client = this.#o.client();
    if (!status || !client) return;
    if (status.kind === "assistant") {
      await this.#call("assistant.threads.setStatus", () =>
        client.assistant.threads.setStatus({
          channel_id: target.chatId,
          thread_ts: status.threadTs,
          status: "",
        }),
      );
    } else {
      await this.#call("reactions.remove", () =>
        client.reactions.remove({
          channel: target.chatId,
          timestamp: status.ts,
          name: this.#o.workingReaction,
        }),
      ).catch((err: unknown) => {
        if (toSlackFailure(err).code !== "no_reaction") throw err;
      });
    }
  }

  streamDelta(target: Target, delta: string): void {
    if (this.#o.streaming === "edit") this.#previews.delta(target, delta);
  }

  streamReset(target: Target, discardedChars: number): void {
    if (this.#o.streaming === "edit") this.#previews.reset(target, discardedChars);
  }

  forgetPreviews(): void {
    this.#previews.clear();
    this.#working.clear();
  }

  #previewApi(): PreviewApi {
    return {
      post: async (target, text) => {
        const client = this.#client();
        const res = await this.#call("chat.postMessage", () =>
          client.chat.postMessage({
            channel: target.chatId,
            text: markdownToMrkdwn(text),
            ...(target.threadId ? { thread_ts: target.threadId } : {}),
            unfurl_links: false,
            unfurl_media: false,
          }),
        );
        return res.ts ?? "";
      },
      update: (target, ts, text) =>
        this.#call("chat.update", () =>
          this.#client().chat.update({ channel: target.chatId, ts, text: markdownToMrkdwn(text) }),
        ),
    };
  }

  #sent(message: OutboundMessage, ts: string): SendReceipt {
    if (message.threadId) this.#o.threads.add(message.chatId, message.threadId);
    return { platformMessageId: `${message.chatId}:${ts}` };
  }

  /** Runs one Web API call unless its method is rate limited; a 429 blocks the method. */
  async #call<T>(method: string, call: () => Promise<T>): Promise<T> {
    const until = this.#blocked.get(method) ?? 0;
    const wait = until - this.#o.clock.now();
    if (wait > 0)
      throw new ChannelSendError(
        "rate_limit",
        `${method} is rate limited for ${Math.ceil(wait / 1000)} s more`,
        {
          retryAfterMs: wait,
        },
      );
    try {
      return await call();
    } catch (err) {
      const f: SlackFailure = toSlackFailure(err);
      if (f.kind === "rate_limit") {
        this.#blocked.set(method, this.#o.clock.now() + (f.retryAfterMs ?? 1_000));
        this.#o.logger.warn({ method, retryAfterMs: f.retryAfterMs }, "Slack rate limit: method paused");
      }
      throw err;
    }
  }

  #client(): webApi.WebClient {
    const client = this.#o.client();
    if (!client) throw new ChannelSendError("transient", `slack account ${this.#o.accountId} is not started`);
    return client;
  }

  #toSendError(err: unknown, channel: string): ChannelSendError {
    if (err instanceof ChannelSendError) return err;
    const sendError = toSendError(toSlackFailure(err), err, channel);
    if (!sendError.retryable)
      this.#o.logger.warn({ channel, err: sendError.message }, "Slack refused the message");
    return sendError;
  }
}

/** `<channel>:<ts>` (a platformMessageId) → the ts. */
function tsOf(platformMessageId: string): string {
  return platformMessageId.slice(platformMessageId.lastIndexOf(":") + 1);
}

function statusKey(target: Target): string {
  return `${target.chatId}:${target.threadId ?? ""}:${target.replyTo ?? ""}`;
}
