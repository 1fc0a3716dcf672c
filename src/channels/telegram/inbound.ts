/**
 * Telegram Update → InboundMessage: which updates carry a person's message, who sent it,
 * whether the bot was addressed, and which files came with it. Pure; no I/O.
 */
import type { Message, Update, UserFromGetMe } from "grammy/types";

/** A file to download before the message is committed. */
export interface PendingFile {
  fileId: string;
  kind: "image" | "document" | "audio" | "video" | "other";
  name: string;
  sizeBytes: number | undefined;
  mimeType: string | undefined;
}

/** The mapping's verdict. */
export type MappedUpdate =
  | { type: "ignore"; why: string }
  | {
      type: "message";
      message: Message;
      chatId: string;
      threadId: string | undefined;
      isDirect: boolean;
      mentionsBot: boolean;
      text: string;
      senderId: string;
      senderName: string;
      replyToText: string | undefined;
      files: PendingFile[];
    };

/** How a group message can address the bot besides @mentions and replies. */
export interface AddressingRules {
  /** Extra patterns (case-insensitive regular expressions) that address the bot. */
  mentionPatterns: readonly RegExp[];
  /** The bot's own command names, lower case, without `/` (`new`, `stop`, …). */
  commands: ReadonlySet<string>;
}

/** Decides what an update is. */
export function mapUpdate(update: Update, bot: UserFromGetMe, rules: AddressingRules): MappedUpdate {
  if (update.edited_message || update.edited_channel_post) return { type: "ignore", why: "edited message" };
  if (update.channel_post) return { type: "ignore", why: "channel post" };
  const message = update.message;
  if (!message)
    return {
      type: "ignore",
      why: `unsupported update (${
        Object.keys(update)
          .filter((k) => k !== "update_id")
          .join(", ") || "empty"
      })`,
    };
  if (!message.from) return { type: "ignore", why: "message without a sender" };
  if (message.from.is_bot) return { type: "ignore", why: "message from a bot" };
  const files = filesOf(message);
  const text = message.text ?? message.caption ?? "";
  if (text.trim() === "" && files.length === 0) {
    return { type: "ignore", why: `service message (${serviceKind(message)})` };
  }
  const isDirect = message.chat.type === "private";
  const threadId =
    message.is_topic_message && message.message_thread_id ? String(message.message_thread_id) : undefined;
  const from = message.from;
  const senderName =
    [from.first_name, from.last_name].filter(Boolean).join(" ") || from.username || String(from.id);
  const reply = message.reply_to_message;
  return {
    type: "message",
    message,
    chatId: String(message.chat.id),
    threadId,
    isDirect,
    mentionsBot: isDirect || addressesBot(message, bot, rules),
    text,
    senderId: String(from.id),
    senderName,
    replyToText: reply ? (reply.text ?? reply.caption) : undefined,
    files,
  };
}

/**
 * Whether a group message is for this bot: a leading command addressed to it (`/cmd@thisbot`, or
 * one of its own commands bare), a mention of @botname, a reply to one of its messages, or a
 * configured pattern. A command addressed to another bot (`/cmd@otherbot`) never is, whatever
 * else the message holds; a bare command the bot does not have (`/roll`) is someone else's.
 */
function addressesBot(message: Message, bot: UserFromGetMe, rules: AddressingRules): boolean {
  const text = message.text ?? message.caption ?? "";
  const entities = message.entities ?? message.caption_entities ?? [];
  const username = bot.username.toLowerCase();
  const command = entities.find((e) => e.type === "bot_command" && e.offset === 0);
  if (command) {
    const [name = "", target] = text.slice(1, command.length).toLowerCase().split("@");
    if (target !== undefined) return target === username;
    if (rules.commands.has(name)) return true;
  }
  if (message.reply_to_message?.from?.id === bot.id) return true;
  for (const e of entities) {
    const part = text.slice(e.offset, e.offset + e.length).toLowerCase();
    if (e.type === "mention" && part === `@${username}`) return true;
    if (e.type === "text_mention" && e.user.id === bot.id) return true;
  }
  return rules.mentionPatterns.some((p) => p.test(text));
}

/** The fields documents, voice notes, audio and video share. */
interface MediaFile {
  file_id: string;
  file_name?: string;
  file_size?: number;
  mime_type?: string;
}

function filesOf(message: Message): PendingFile[] {
  const files: PendingFile[] = [];
  if (message.photo && message.photo.length > 0) {
    const largest = message.photo.reduce((a, b) =>
      (b.file_size ?? b.width * b.height) > (a.file_size ?? a.width * a.height) ? b : a,
    );
    files.push({
      fileId: largest.file_id,
      kind: "image",
      name: `photo-${message.message_id}.jpg`,
      sizeBytes: largest.file_size,
      mimeType: "image/jpeg",
    });
  }
  const id = message.message_id;
  const media: Array<[MediaFile | undefined, PendingFile["kind"], string, string | undefined]> = [
    [message.document, "document", `document-${id}`, undefined],
    [message.voice, "audio", `voice-${id}.ogg`, "audio/ogg"],
    [message.audio, "audio", `audio-${id}`, undefined],
    [message.video, "video", `video-${id}.mp4`, undefined],
  ];
  for (const [file, kind, fallbackName, fallbackMime] of media) {
    if (!file) continue;
    files.push({
      fileId: file.file_id,
      kind,
      name: file.file_name ?? fallbackName,
      sizeBytes: file.file_size,
      mimeType: file.mime_type ?? fallbackMime,
    });
  }
  return files;
}

function serviceKind(message: Message): string {
  const known = [
    "new_chat_members",
    "left_chat_member",
    "new_chat_title",
    "new_chat_photo",
    "pinned_message",
    "group_chat_created",
    "forum_topic_created",
    "sticker",
  ];
  return known.find((k) => k in message) ?? "no text";
}
