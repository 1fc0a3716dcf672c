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
import type { PreviewLedger } from "../preview-ledger.js";
import { type PreviewApi, type PreviewTarget, StreamingPreviews } from "../preview.js";
import type { ChatTarget, OutboundMessage, SendReceipt } from "../types.js";
import { type SlackFailure, toSendError, toSlackFailure } from "./errors.js";
import { markdownToMrkdwn, renderSlackChunks } from "./format.js";
import type { SlackIdentity } from "./inbound.js";
import type { BotThreads } from "./slack-intake.js";

/** The metadata event type every reply carries. */
export const REPLY_EVENT_TYPE = "switchyard_reply";
/** The metadata event type a streaming preview carries until a reply takes it over. */
export const PREVIEW_EVENT_TYPE = "switchyard_preview";

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
  /** Where previews are recorded across restarts; absent: in memory only. */
  previewLedger?: PreviewLedger;
}

type Target = ChatTarget & { replyTo?: string };

/** A status shown while a run works, to clear when it ends. */
type WorkingStatus = { kind: "assistant"; threadTs: string } | { kind: "reaction"; ts: string };

/** Sends, looks up, edits, statuses and previews for one Slack app (see the file header). */
export class SlackSender {
  readonly #o: SlackSenderOptions;
  /** The streaming previews (`streaming: edit`) of this account; the channel drives them. */
  readonly previews: StreamingPreviews;
  /** Until when each Web API method is rate limited (epoch ms). */
  readonly #blocked = new Map<string, number>();
  readonly #working = new Map<string, WorkingStatus>();
  /** Whether `assistant.threads.setStatus` works for this app (unknown until tried). */
  #assistant: boolean | undefined;
  #warnedNoHistory = false;

  constructor(options: SlackSenderOptions) {
    this.#o = options;
    const previewApi = this.#previewApi();
    this.previews = new StreamingPreviews({
      api: () => (options.client() ? previewApi : undefined),
      enabled: options.streaming === "edit",
      ...(options.previewLedger ? { ledger: options.previewLedger } : {}),
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
    const preview = await this.previews.take(message);
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
    const createdAt =
      message.createdAt ?? Number.parseInt(message.idempotencyKey.split("-").at(-1) ?? "", 36);
    const oldest = Number.isFinite(createdAt) ? ((createdAt - 120_000) / 1000).toFixed(6) : undefined;
    const ts = await this.#findTagged(message, oldest, REPLY_EVENT_TYPE, message.idempotencyKey);
    return ts === undefined ? undefined : { platformMessageId: `${message.chatId}:${ts}` };
  }

  /**
   * The ts of the bot's message in the target's thread (or channel) since `oldest` whose metadata
   * is `eventType` with `key`: a bounded read of at most `lookupPages` pages. Without the history
   * scope it cannot tell; it says so once and resolves undefined (the caller then posts, at least
   * once, as on platforms without lookups). Other failures throw a ChannelSendError.
   */
  async #findTagged(
    target: PreviewTarget,
    oldest: string | undefined,
    eventType: string,
    key: string,
  ): Promise<string | undefined> {
    const client = this.#client();
    const me = this.#o.me();
    const channel = target.chatId;
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
        const res = target.threadId
          ? await this.#call("conversations.replies", () =>
              client.conversations.replies({ ...common, ts: target.threadId as string }),
            )
          : await this.#call("conversations.history", () => client.conversations.history(common));
        const found = (res.messages ?? []).find(
          (m) =>
            m.metadata?.event_type === eventType &&
            (m.metadata.event_payload as { key?: unknown } | undefined)?.key === key &&
            (!me || m.bot_id === me.botId || m.user === me.userId),
        );
        if (found?.ts) return found.ts;
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
            "cannot look up sent replies (missing history scope): a reply or preview interrupted mid-send may show twice",
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

  forgetPreviews(): void {
    this.previews.clear();
    this.#working.clear();
  }

  /**
   * Slack's calls for a streaming preview: a post tagged with its turn's key (metadata
   * `switchyard_preview`), so a preview posted just before a crash, before it was recorded, is
   * found again in the thread; edits; a delete.
   */
  #previewApi(): PreviewApi {
    return {
      post: async (target, text) => {
        const client = this.#client();
        const res = await this.#call("chat.postMessage", () =>
          client.chat.postMessage({
            channel: target.chatId,
            text: markdownToMrkdwn(text),
            ...(target.threadId ? { thread_ts: target.threadId } : {}),
            metadata: { event_type: PREVIEW_EVENT_TYPE, event_payload: { key: previewKey(target) } },
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
      remove: (target, ts) =>
        this.#call("chat.delete", () => this.#client().chat.delete({ channel: target.chatId, ts })),
      // Posted after the message it answers (or in the last hour, for a turn that answers none).
      find: (target) => {
        const since = target.replyTo
          ? tsOf(target.replyTo)
          : ((this.#o.clock.now() - 3_600_000) / 1000).toFixed(6);
        return this.#findTagged(target, since, PREVIEW_EVENT_TYPE, previewKey(target));
      },
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

/** The metadata key of a turn's preview: its chat, thread and the message it answers. */
function previewKey(target: PreviewTarget): string {
  return `${target.chatId}:${target.threadId ?? ""}:${target.replyTo ?? ""}`;
}

function statusKey(target: Target): string {
  return `${target.chatId}:${target.threadId ?? ""}:${target.replyTo ?? ""}`;
}
