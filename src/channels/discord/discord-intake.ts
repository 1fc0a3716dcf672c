/**
 * Discord intake: a discord.js `messageCreate` viewed (inbound.ts maps it), its replied-to text
 * and attachments (admitted senders only, under the size cap) added, committed through the
 * gateway's sink; and a slash command mapped to its chat command and answered ephemerally (a
 * deferred reply, edited once the router answered). A gateway RESUME may replay a message the
 * gateway already committed: the inbox answers it as a duplicate (its key is the message id).
 */
import type { ChatInputCommandInteraction, Message } from "discord.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import {
  attachmentDir,
  downloadAttachment,
  fileKind,
  safeFileName,
  saveAttachments,
} from "../attachments.js";
import { commandAnswer } from "../command-answer.js";
import { SLASH_ARGUMENT } from "./client.js";
import { SinkUnavailableError } from "../errors.js";
import type { AcceptResult, InboundMessage, InboundSink } from "../types.js";
import { type DiscordMessageView, mapDiscordMessage } from "./inbound.js";

/** Tries to commit one message before it is left to the next start's catch-up. */
const MAX_TAKE_ATTEMPTS = 12;

/** Ephemeral: only the person who ran the command sees the answer. */
const EPHEMERAL = 64;

/** Channel types of threads (announcement, public, private). */
const THREAD_TYPES = new Set([10, 11, 12]);

export interface DiscordIntakeOptions {
  accountId: string;
  workspaceDir: string;
  mediaMaxBytes: number;
  downloadTimeoutMs: number;
  mentionPatterns: readonly RegExp[];
  clock: Clock;
  logger: Logger;
  sink(): InboundSink | undefined;
  botId(): string | undefined;
  /** Aborted when the channel stops (ends downloads). */
  life(): AbortSignal | undefined;
}

/** Turns Discord deliveries into committed inbound messages (see the file header). */
export class DiscordIntake {
  readonly #o: DiscordIntakeOptions;

  constructor(options: DiscordIntakeOptions) {
    this.#o = options;
  }

  /**
   * The `messageCreate` listener; never rejects (failures are logged). Discord redelivers
   * nothing, so a message the gateway could not commit (the store busy or failing) is taken
   * again after the sink's `retryAfterMs` (at most 5 s apart, MAX_TAKE_ATTEMPTS times) while the
   * channel runs; its chat's later messages wait behind it in the intake queue, so they are not
   * answered first. Once the channel stops, what is left is the restart's catch-up's.
   */
  async message(message: Message): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#handle(message);
        return;
      } catch (err) {
        if (!(err instanceof SinkUnavailableError)) {
          this.#o.logger.error({ err, messageId: message.id }, "could not handle a Discord message");
          return;
        }
        const life = this.#o.life();
        if (attempt < MAX_TAKE_ATTEMPTS && life && !life.aborted) {
          this.#o.logger.warn(
            { messageId: message.id, attempt, err: err.message },
            "discord message not committed; taking it again",
          );
          try {
            await this.#o.clock.sleep(Math.min(err.retryAfterMs, 5_000), life);
            continue;
          } catch {
            // The channel stopped meanwhile.
          }
        }
        // Not committed (shutting down, or the store kept failing): the person sees no answer
        // unless the next start's catch-up reads it back.
        this.#o.logger.warn({ messageId: message.id, err: err.message }, "discord message not taken");
        return;
      }
    }
  }

  async #handle(message: Message): Promise<void> {
    const o = this.#o;
    const botId = o.botId();
    const sink = o.sink();
    if (!botId || !sink) throw new SinkUnavailableError("the Discord channel is not running");
    const view = viewOf(message);
    const mapped = mapDiscordMessage(view, botId, { mentionPatterns: o.mentionPatterns });
    if (mapped.type === "ignore") {
      o.logger.debug(
        { channelId: view.channelId, messageId: view.id, why: mapped.why },
        "discord message ignored",
      );
      return;
    }
    const base: InboundMessage = {
      channel: "discord",
      accountId: o.accountId,
      chatId: mapped.chatId,
      ...(mapped.threadId ? { threadId: mapped.threadId } : {}),
      ...(mapped.serverId ? { serverId: mapped.serverId } : {}),
      senderId: view.author.id,
      senderName: view.author.name,
      isDirect: mapped.isDirect,
      mentionsBot: mapped.mentionsBot,
      text: mapped.text,
      attachments: [],
      platformMessageId: message.id,
      receivedAt: o.clock.now(),
    };
    // One side-effect-free access check decides what only a message that will reach the model
    // deserves: its replied-to text (a fetch) and its attachments (on disk).
    const files = message.attachments.size > 0;
    const admitted = message.reference || files ? (await sink.admits?.(base)) !== false : false;
    const replyToText = admitted && message.reference ? await this.#repliedText(message) : undefined;
    if (replyToText) base.replyToText = replyToText;
    await sink.accept(files ? await this.#withFiles(base, message, admitted) : base);
  }

  /** The text of the message this one replies to: from the cache, else fetched (best effort). */
  async #repliedText(message: Message): Promise<string | undefined> {
    const ref = message.reference?.messageId;
    if (!ref) return undefined;
    const cached = message.channel.messages.cache.get(ref);
    if (cached) return cached.content || undefined;
    try {
      const fetched = await message.fetchReference();
      return fetched.content || undefined;
    } catch (err) {
      this.#o.logger.debug({ err, messageId: message.id }, "replied-to message not readable");
      return undefined;
    }
  }

  async #withFiles(base: InboundMessage, message: Message, admitted: boolean): Promise<InboundMessage> {
    const o = this.#o;
    const signal = o.life() ?? AbortSignal.abort();
    const withFiles = await saveAttachments(base, [...message.attachments.values()], {
      admits: async () => admitted,
      logger: o.logger,
      describe: (file) => ({ file: file.name }),
      save: (file) =>
        downloadAttachment(
          {
            name: file.name,
            kind: fileKind(file.contentType ?? undefined),
            mimeType: file.contentType ?? undefined,
            sizeBytes: file.size,
            workspaceDir: o.workspaceDir,
            relDir: attachmentDir("discord", base.chatId, base.threadId),
            fileName: `${message.id}-${safeFileName(file.name)}`,
            maxBytes: o.mediaMaxBytes,
            timeoutMs: o.downloadTimeoutMs,
            limitSetting: "channels.discord.mediaMaxMb",
            clock: o.clock,
            // Attachment URLs are signed CDN links: no token is sent with them.
            open: (both) => fetch(file.url, { signal: both }),
          },
          signal,
        ),
    });
    if (signal.aborted) throw new SinkUnavailableError("the Discord channel stopped mid-download");
    return withFiles;
  }

  /**
   * The `interactionCreate` listener for slash commands: `/status` runs that chat command for the
   * person in this conversation; the answer is ephemeral. The reply is deferred first (Discord
   * wants an answer within 3 s), then edited with the router's answer. Never rejects.
   */
  async command(interaction: ChatInputCommandInteraction): Promise<void> {
    try {
      await this.#command(interaction);
    } catch (err) {
      this.#o.logger.error({ err, command: interaction.commandName }, "could not handle a slash command");
    }
  }

  async #command(interaction: ChatInputCommandInteraction): Promise<void> {
    const o = this.#o;
    const answer = (content: string) =>
      interaction
        .editReply({ content, allowedMentions: { parse: [] } })
        .catch((err: unknown) => o.logger.warn({ err }, "slash command answer not delivered"));
    try {
      await interaction.deferReply({ flags: EPHEMERAL });
    } catch (err) {
      o.logger.warn({ err, command: interaction.commandName }, "slash command could not be acknowledged");
      return;
    }
    const sink = o.sink();
    if (!sink) {
      await answer("I am not ready yet; try again in a moment.");
      return;
    }
    const channel = interaction.channel;
    const isDirect = interaction.guildId === null;
    const inThread = channel !== null && THREAD_TYPES.has(channel.type) && "parentId" in channel;
    const parentId = inThread ? (channel as { parentId: string | null }).parentId : null;
    const arg = interaction.options.getString(SLASH_ARGUMENT[interaction.commandName] ?? "") ?? "";
    const user = interaction.user;
    const message: InboundMessage = {
      channel: "discord",
      accountId: o.accountId,
      chatId: parentId ?? interaction.channelId,
      ...(parentId ? { threadId: interaction.channelId } : {}),
      ...(interaction.guildId ? { serverId: interaction.guildId } : {}),
      senderId: user.id,
      senderName: user.globalName ?? user.username,
      isDirect,
      mentionsBot: true,
      answeredInPlace: true,
      text: `/${interaction.commandName}${arg ? ` ${arg}` : ""}`,
      attachments: [],
      platformMessageId: `command:${interaction.id}`,
      receivedAt: o.clock.now(),
    };
    let result: AcceptResult;
    try {
      result = await sink.accept(message);
    } catch (err) {
      o.logger.warn({ err, command: interaction.commandName }, "slash command not taken");
      await answer("I could not take that just now (I may be restarting); try again in a moment.");
      return;
    }
    await answer(commandAnswer(result));
  }
}

/** The plain view inbound.ts maps, read from a discord.js Message. */
export function viewOf(message: Message): DiscordMessageView {
  const channel = message.channel;
  const thread = channel.isThread() ? channel : undefined;
  const names = <T extends { id: string }>(items: Iterable<T>, name: (item: T) => string) =>
    new Map([...items].map((item) => [item.id, name(item)] as const));
  return {
    id: message.id,
    channelId: message.channelId,
    guildId: message.guildId,
    isDm: channel.isDMBased(),
    threadParentId: thread?.parentId ?? undefined,
    type: message.type,
    webhookId: message.webhookId,
    author: {
      id: message.author.id,
      bot: message.author.bot,
      name: message.member?.displayName ?? message.author.globalName ?? message.author.username,
    },
    content: message.content,
    mentionedUsers: names(message.mentions.users.values(), (u) => u.globalName ?? u.username),
    mentionedRoles: names(message.mentions.roles.values(), (r) => r.name),
    mentionedChannels: names(message.mentions.channels.values(), (c) =>
      "name" in c && typeof c.name === "string" ? c.name : c.id,
    ),
    repliedToUserId: message.mentions.repliedUser?.id,
  };
}
