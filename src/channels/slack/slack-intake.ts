/**
 * Slack intake: a `message` or `app_mention` event mapped to an inbound message, its sender
 * named, its files downloaded (admitted senders only), and committed through the gateway's
 * sink; and the slash command mapped to the chat commands, answered ephemerally. A delivery is
 * acknowledged only once committed (receiver.ts): a commit failure marks it failed, so Slack
 * sends it again. One message can arrive several times — Slack's retries, an envelope re-sent
 * after a reconnect, and the `message` + `app_mention` twins of one mention — and has one dedupe
 * key (`<channel>:<ts>`) for all of them; a copy arriving while the first is still being
 * handled waits for it, and the inbox answers it as a duplicate.
 */
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import { TtlCache } from "../../util/ttl-cache.js";
import { SinkUnavailableError } from "../errors.js";
import { saveAttachments } from "../attachments.js";
import { commandAnswer } from "../command-answer.js";
import type { AcceptResult, InboundMessage, InboundSink } from "../types.js";
import type { SlackDirectory } from "./directory.js";
import { downloadSlackFile } from "./download.js";
import { isDmChannel, mapSlackEvent, type SlackIdentity, type SlackMessageEvent } from "./inbound.js";
import { DELIVERY, type DeliveryState } from "./receiver.js";

/** Threads the bot answered in: a reply there addresses the bot without a mention. */
export class BotThreads {
  readonly #threads: TtlCache<string, true>;
  constructor(now: () => number) {
    this.#threads = new TtlCache({ maxEntries: 10_000, ttlMs: 7 * 24 * 3_600_000, now });
  }
  add(channel: string, threadTs: string): void {
    this.#threads.set(`${channel}:${threadTs}`, true);
  }
  has(channel: string, threadTs: string): boolean {
    return this.#threads.has(`${channel}:${threadTs}`);
  }
}

export interface SlackIntakeOptions {
  accountId: string;
  botToken: string;
  workspaceDir: string;
  mediaMaxBytes: number;
  downloadTimeoutMs: number;
  mentionPatterns: readonly RegExp[];
  /** The chat commands the slash command maps to (`new`, `stop`, …). */
  commands: ReadonlySet<string>;
  slashCommand: string;
  threads: BotThreads;
  directory: SlackDirectory;
  clock: Clock;
  logger: Logger;
  sink(): InboundSink | undefined;
  me(): SlackIdentity | undefined;
  /** Aborted when the channel stops (ends downloads). */
  life(): AbortSignal | undefined;
}

/** The slash command's payload fields the adapter reads. */
export interface SlashCommandBody {
  command?: string;
  text?: string;
  user_id?: string;
  user_name?: string;
  channel_id?: string;
  channel_name?: string;
  trigger_id?: string;
}

/** Turns Slack deliveries into committed inbound messages (see the file header). */
export class SlackIntake {
  readonly #o: SlackIntakeOptions;
  /** Messages being handled now, by dedupe key: a copy waits for the first. */
  readonly #inflight = new Map<string, Promise<void>>();

  constructor(options: SlackIntakeOptions) {
    this.#o = options;
  }

  /** Bolt listener for `message` and `app_mention`. */
  async event(event: SlackMessageEvent, context: Record<string, unknown>): Promise<void> {
    const delivery = context[DELIVERY] as DeliveryState | undefined;
    const key = `${event.channel ?? ""}:${event.ts ?? ""}`;
    const first = this.#inflight.get(key);
    if (first) await first;
    const handling = this.#handle(event).catch((err: unknown) => {
      if (err instanceof SinkUnavailableError) {
        if (delivery) delivery.failed = true;
        return;
      }
      // Our own failure (a bug, a disk error): logged; Slack's copy would fail the same way.
      this.#o.logger.error({ err, channel: event.channel, ts: event.ts }, "could not handle a Slack event");
    });
    this.#inflight.set(key, handling);
    try {
      await handling;
    } finally {
      if (this.#inflight.get(key) === handling) this.#inflight.delete(key);
    }
  }

  async #handle(event: SlackMessageEvent): Promise<void> {
    const o = this.#o;
    const me = o.me();
    const sink = o.sink();
    if (!me || !sink) throw new SinkUnavailableError("the Slack channel is not running");
    if (event.channel && !event.channel_type && event.type === "app_mention") {
      // app_mention carries no channel_type: a DM or group DM is told by the conversation.
      const c = await o.directory.conversation(event.channel);
      if (c?.isIm) event = { ...event, channel_type: "im" };
      else if (c?.isMpim) event = { ...event, channel_type: "mpim" };
    }
    const mapped = mapSlackEvent(event, me, {
      mentionPatterns: o.mentionPatterns,
      inBotThread: (channel, ts) => o.threads.has(channel, ts),
    });
    if (mapped.type === "ignore") {
      o.logger.debug({ channel: event.channel, ts: event.ts, why: mapped.why }, "slack event ignored");
      return;
    }
    const base: InboundMessage = {
      channel: "slack",
      accountId: o.accountId,
      chatId: mapped.chatId,
      ...(mapped.threadId ? { threadId: mapped.threadId } : {}),
      ...(mapped.startsThread ? { startsThread: true } : {}),
      senderId: mapped.senderId,
      senderName: await o.directory.userName(mapped.senderId),
      isDirect: mapped.isDirect,
      mentionsBot: mapped.mentionsBot,
      text: mapped.text,
      attachments: [],
      platformMessageId: `${mapped.chatId}:${mapped.ts}`,
      receivedAt: o.clock.now(),
    };
    const message = mapped.files.length > 0 ? await this.#withFiles(base, mapped, sink) : base;
    const result = await sink.accept(message);
    if (result.status === "accepted" && mapped.threadId && mapped.mentionsBot)
      o.threads.add(mapped.chatId, mapped.threadId);
  }

  async #withFiles(
    base: InboundMessage,
    mapped: Extract<ReturnType<typeof mapSlackEvent>, { type: "message" }>,
    sink: InboundSink,
  ): Promise<InboundMessage> {
    const o = this.#o;
    const signal = o.life() ?? AbortSignal.abort();
    const message = await saveAttachments(base, mapped.files, {
      admits: sink.admits?.bind(sink),
      logger: o.logger,
      describe: (file) => ({ fileId: file.id }),
      save: (file) =>
        downloadSlackFile(
          file,
          { chatId: mapped.chatId, threadId: mapped.threadId, ts: mapped.ts },
          {
            botToken: o.botToken,
            workspaceDir: o.workspaceDir,
            maxBytes: o.mediaMaxBytes,
            timeoutMs: o.downloadTimeoutMs,
            clock: o.clock,
          },
          signal,
        ),
    });
    if (signal.aborted) throw new SinkUnavailableError("the Slack channel stopped mid-download");
    return message;
  }

  /**
   * Bolt listener for the slash command: `/switchyard <command>` runs that chat command for
   * the person in this conversation; the answer is ephemeral (only they see it).
   */
  async command(
    body: SlashCommandBody,
    ack: (response: { response_type: "ephemeral"; text: string }) => Promise<void>,
  ): Promise<void> {
    const o = this.#o;
    const answer = (text: string) => ack({ response_type: "ephemeral", text });
    const [word = "help", ...rest] = (body.text ?? "").trim().split(/\s+/).filter(Boolean);
    const name = word.toLowerCase().replace(/^\//, "");
    if (!o.commands.has(name)) {
      await answer(
        `Unknown command "${word}". Try ${o.slashCommand} ${[...o.commands].join("|")}; to talk to me, mention me or send me a direct message.`,
      );
      return;
    }
    const sink = o.sink();
    if (!sink || !body.channel_id || !body.user_id) {
      await answer("I am not ready yet; try again in a moment.");
      return;
    }
    const channelId = body.channel_id;
    const isDirect = isDmChannel(channelId) || body.channel_name === "directmessage";
    const message: InboundMessage = {
      channel: "slack",
      accountId: o.accountId,
      chatId: channelId,
      senderId: body.user_id,
      senderName: await o.directory.userName(body.user_id),
      isDirect,
      mentionsBot: true,
      answeredInPlace: true,
      text: [`/${name}`, ...rest].join(" "),
      attachments: [],
      platformMessageId: `command:${body.trigger_id ?? `${channelId}:${o.clock.now()}`}`,
      receivedAt: o.clock.now(),
    };
    let result: AcceptResult;
    try {
      result = await sink.accept(message);
    } catch (err) {
      // A person is looking at the command: tell them now rather than leave Slack to time out.
      o.logger.warn({ err, command: name }, "slash command not taken");
      await answer("I could not take that just now (I may be restarting); try again in a moment.");
      return;
    }
    await answer(commandAnswer(result));
  }
}
