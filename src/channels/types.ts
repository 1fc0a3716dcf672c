/**
 * The channel port: every platform adapter (console, HTTP, Telegram, Slack, Discord)
 * converts its platform's events into InboundMessage and sends OutboundMessage; and the channel
 * module: what one platform folder exports so the gateway can configure, build, check and
 * secure it without knowing its name.
 */

/** Names of the channels the gateway knows. Closed set; adapters register in channels/registry.ts. */
export type ChannelName = "console" | "http" | "telegram" | "slack" | "discord";

/** A file that came with an inbound message, already saved to the workspace. */
export interface Attachment {
  kind: "image" | "document" | "audio" | "video" | "other";
  /** Path relative to the agent workspace. */
  path: string;
  mimeType?: string;
  sizeBytes?: number;
  name?: string;
}

/** One message from a person, as every channel reports it. */
export interface InboundMessage {
  channel: ChannelName;
  /** Which configured bot account received it ("default" when only one). */
  accountId: string;
  chatId: string;
  threadId?: string;
  /** The server the chat belongs to (a Discord guild), for access rules per server. */
  serverId?: string;
  senderId: string;
  senderName: string;
  isDirect: boolean;
  /** True when the bot was addressed (mention, reply to the bot, or a DM). */
  mentionsBot: boolean;
  /**
   * A group message that opens a thread of its own (Slack answers a top-level mention in a
   * thread on it, `threadId` = its own id): its session is that thread's, while the group
   * context it sees is its chat's, since the bot's last answer anywhere in the chat.
   */
  startsThread?: boolean;
  /**
   * The platform exchange that carried it answers it (a Slack slash command's ephemeral
   * response): the gateway's own answer (a command reply, a pairing code) is committed as
   * delivered and never posted to the chat.
   */
  answeredInPlace?: boolean;
  text: string;
  attachments: Attachment[];
  /** The platform's own id; with channel + accountId it is the dedupe key. */
  platformMessageId: string;
  replyToText?: string;
  /**
   * Group messages the bot was not addressed in, since its last reply in this chat, oldest
   * first; set by the router on a message that mentions the bot, so the run sees the conversation.
   */
  groupContext?: Array<{ senderName: string; text: string }>;
  /** Epoch ms when the gateway received it. */
  receivedAt: number;
}

/** Where a reply goes. */
export interface ChatTarget {
  channel: ChannelName;
  accountId: string;
  chatId: string;
  threadId?: string;
}

/** One reply chunk to send. */
export interface OutboundMessage extends ChatTarget {
  /** Platform message id this replies to, if the platform threads replies. */
  replyTo?: string;
  text: string;
  /**
   * Stable across retries of the same chunk and unique per install (`outbox-<id>-<created>`):
   * platforms with idempotent sends (a Discord nonce) or sent-message lookups (Slack metadata)
   * use it.
   */
  idempotencyKey: string;
  /** The inbound sender, for channels that route replies by person (HTTP mailbox). */
  recipientId?: string;
  /** The chunk's place in its reply (0: the first, which takes over the turn's preview); absent: 0. */
  seq?: number;
  /** When the reply was committed (epoch ms); absent: now. */
  createdAt?: number;
}

/**
 * Where a running turn's live text goes: its chat, the messages it answers (`inboxIds`, several
 * when collected or steered; the live array, so messages steered in later are included) and the
 * platform message id it replies to (`replyTo`, the same value its outbox rows carry).
 * `recovered`: the turn is redone (its messages were claimed before, by a process that crashed
 * or stopped), so a preview of the earlier attempt may be in the chat already.
 */
export type StreamTarget = ChatTarget & {
  inboxIds: readonly number[];
  replyTo?: string;
  recovered?: boolean;
};

/** One helper (sub-agent) of a session, as its chat is shown it while the helpers work. */
export interface HelperStatus {
  /** The helper's id (`/agents stop <id>`). */
  id: string;
  label: string;
  /** `stopped`: cancelled (/stop, /agents stop); its result is not delivered. */
  state: "running" | "done" | "failed" | "stopped";
  /** Its latest tool call in short ("web_fetch example.com/pricing"); absent before its first. */
  lastCall?: string;
  /** How deep it is (1: a helper of the session, 2: a helper's helper). */
  depth: number;
}

/** What a session's helpers are doing: every helper shown, and the one that just changed. */
export interface HelperProgress {
  helpers: readonly HelperStatus[];
  changed: HelperStatus;
}

/** The platform's receipt for a sent message. */
export interface SendReceipt {
  platformMessageId: string;
}

/** What a channel can carry. */
export interface ChannelLimits {
  /** Longest text one message may hold; longer replies are chunked before they are committed. */
  maxMessageChars: number;
  /** Most lines one message carries (Discord: 17, so clients do not collapse it); absent: no limit. */
  maxLines?: number;
  /** How the channel renders model Markdown. */
  formatting: "plain" | "markdown" | "telegram-html" | "slack-mrkdwn" | "discord-markdown";
}

/**
 * Where a channel delivers what it receives. `accept` resolves once the message is durably
 * committed (or rejected); only then may the channel acknowledge it to its platform. It
 * rejects when the message was NOT committed (the gateway is shutting down, the store failed):
 * the channel must then not acknowledge it, so the platform delivers it again (Telegram:
 * the offset is not confirmed, a webhook answers 5xx; HTTP: 503).
 */
export interface InboundSink {
  accept(message: InboundMessage): Promise<AcceptResult>;
  /**
   * Whether a message like this one (its sender, chat and mention) would reach the agent; no
   * side effects (no pairing code is issued). Channels ask before intake work that only an
   * admitted message deserves, such as downloading its attachments. Absent: assume yes.
   */
  admits?(message: InboundMessage): Promise<boolean>;
}

/** Decides whether a sender may reach the agent; every channel module declares one. */
export interface AccessPolicy {
  check(message: InboundMessage): Promise<AccessVerdict>;
  /** Whether `check` would allow the message, without its side effects (no pairing code). */
  admits?(message: InboundMessage): Promise<boolean>;
  /** How many unaddressed group messages a mentioned run sees (0: none). */
  readonly groupHistoryLimit: number;
}

export type AccessVerdict = { allowed: true } | { allowed: false; reason: string; reply?: string };

/** The router's verdict on an inbound message. */
export type AcceptResult =
  | { status: "accepted"; inboxId: number; sessionKey: string }
  | { status: "duplicate"; inboxId: number; sessionKey: string }
  /** `reply`, when given, goes straight back to the sender (e.g. a pairing code). */
  | { status: "rejected"; reason: string; sessionKey?: string; reply?: string }
  | { status: "command"; reply: string; sessionKey: string };

/** A platform connection's state, as `status` shows it. */
export interface ChannelHealth {
  /** `stopped`: cannot run until fixed (detail says what). `standby`: another node holds it (Channel.exclusive). */
  state: "connected" | "connecting" | "stopped" | "standby";
  detail?: string;
}

/** The adapter port. Optional capabilities are optional members. */
export interface Channel {
  readonly name: ChannelName;
  readonly accountId: string;
  readonly limits: ChannelLimits;
  /**
   * True when committing a reply is its delivery (HTTP, console: the waiting request gets it, or
   * it waits in the sender's mailbox); its outbox rows are then written `sent` and `send` is
   * never called for them. Default false: the outbox sends every row.
   */
  readonly deliversOnCommit?: boolean;
  /**
   * The resource lease of a connection only one process may hold (Telegram long polling, a Discord
   * connection), e.g. `channel:telegram:default`: started only where that lease is held, sent by
   * its holder. Absent: every process runs it (webhooks, Slack Socket Mode, HTTP).
   */
  readonly exclusive?: string;
  /** Connect and start delivering inbound messages to `sink`. */
  start(sink: InboundSink): Promise<void>;
  /** Stop intake and release connections. Idempotent. */
  stop(): Promise<void>;
  /** The platform connection's state (absent: the channel has no connection to lose). */
  health?(): ChannelHealth;
  /**
   * Formats a Markdown reply for this platform and splits it into the chunks `send` takes, each
   * within the platform's limit (default: plain splitting at `limits.maxMessageChars`). The
   * chunks are what the outbox stores, so a resend after a crash sends exactly the same text.
   */
  prepare?(markdown: string): string[];
  /** Send one chunk. Throws ChannelSendError. */
  send(message: OutboundMessage, signal?: AbortSignal): Promise<SendReceipt>;
  /**
   * Whether `message` (by its idempotencyKey) already reached its chat. Asked before a row in
   * doubt is sent again (an earlier send was interrupted or timed out, and may have arrived):
   * the receipt when it is there, undefined when it is not. Throws ChannelSendError when it
   * cannot tell; the row is then retried later, never posted blind. Absent: the row is sent
   * again (Telegram; Discord's nonce makes the resend itself idempotent).
   */
  findSent?(message: OutboundMessage, signal?: AbortSignal): Promise<SendReceipt | undefined>;
  /**
   * Show "typing…" for the target; the caller refreshes it while a run works. `replyTo` is the
   * message the run answers (a Slack status reaction goes on it).
   */
  typing?(target: ChatTarget & { replyTo?: string }): Promise<void>;
  /** The run that showed typing ended: clear a status that does not expire by itself (Slack). */
  typingDone?(target: ChatTarget & { replyTo?: string }): Promise<void>;
  /** Replace the text of a message this channel sent. */
  edit?(target: ChatTarget, platformMessageId: string, text: string): Promise<void>;
  /**
   * Live text of a running turn (HTTP SSE, a platform's preview message); best effort. A
   * channel that streams per request (HTTP) routes the text to the requests waiting on exactly
   * the turn's `inboxIds`; one that previews per turn (Telegram, Slack, Discord) keeps one
   * preview per turn, threads it to `replyTo`, records its message id (ChannelFactoryContext
   * `previews`) and replaces exactly it with the reply's first chunk.
   */
  streamDelta?(target: StreamTarget, delta: string): void;
  /**
   * The last `discardedChars` characters (UTF-16 code units, as `String.length` counts them)
   * streamed through `streamDelta` for this turn were discarded — a model call failed part-way —
   * and the text streamed next replaces them. Never more than the turn streamed since its last
   * reset; text of earlier model calls (before tool calls) stays. Best effort, like `streamDelta`:
   * an editable preview drops the text (Telegram), an append-only stream (HTTP SSE) writes
   * nothing it already sent again. Absent: the channel keeps the discarded text.
   */
  streamReset?(target: StreamTarget, discardedChars: number): void;
  /**
   * The turn ended and nothing of it will be sent to `target` (an empty answer, a run that
   * yielded, messages another run finished): its preview, if it has one — also one a crashed
   * earlier attempt left — is removed from the chat. Best effort.
   */
  streamDiscard?(target: StreamTarget): void;
  /**
   * The session's helpers are at work (a change: a tool call, an end). `target` is where the
   * session's next turn (the wake with their results) answers: a channel that previews (Telegram,
   * Slack, Discord) shows the list in that turn's preview, which the turn's text or answer then
   * replaces, or its `streamDiscard` removes; one that streams per request (HTTP) writes a
   * `subagent` event to the chat's open streams. Best effort, like `streamDelta`.
   */
  streamHelpers?(target: StreamTarget, progress: HelperProgress): void;
}

/** Tokens a run used (the harness's TokenUsage, restated so channels depend on no harness type). */
export interface AnswerUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** A finished message as a waiting request learns it. */
export interface ChatAnswer {
  inboxId: number;
  state: "answered" | "failed" | "rejected";
  replies: string[];
  /** Tokens of the run that answered it (absent for gateway answers: commands, refusals). */
  usage?: AnswerUsage;
}

/** One reply in a recipient's mailbox (the HTTP and console channels). */
export interface MailboxEntry {
  /** Its mailbox cursor: pass it as `after` (or `Last-Event-ID`) to read on after it. */
  id: number;
  text: string;
  createdAt: number;
  /** The platform id of the message it answers (the client's `id` on POST), when it answers one. */
  replyTo?: string;
  /**
   * What produced it: the trigger of the run that wrote it ("user", "cron", "heartbeat", "wake",
   * "assignment", …); for a row no run wrote, "cron" (a job's notice), "assignment" (a report to
   * its owner) or "gateway" (commands, the gateway's own notices).
   */
  origin: string;
}

/**
 * For channels that answer in the same exchange (HTTP, console): wait for a committed
 * message's outcome, and read replies that were delivered while nobody was waiting.
 */
export interface AnswerSource {
  waitForAnswer(inboxId: number, signal?: AbortSignal): Promise<ChatAnswer>;
  /** Replies sent on `channel` to `recipientId` with cursor > afterId (a mailbox), in cursor order. */
  listReplies(channel: ChannelName, recipientId: string, afterId: number): Promise<MailboxEntry[]>;
  /** The last cursor of that mailbox (0 when empty): where a reader of only what comes next starts. */
  mailboxEnd(channel: ChannelName, recipientId: string): Promise<number>;
  /**
   * Calls `listener` whenever replies may have been sent in this process (a hint to read the
   * mailbox now); returns the unsubscribe function. Absent: readers only poll.
   */
  onReplies?(listener: () => void): () => void;
}

// The channel module side (what a platform folder exports): channels/module-types.ts.
export type {
  RouteRegistrar,
  ChannelSignals,
  ChannelFactoryContext,
  ChannelSet,
  ChannelCheck,
  ChannelModule,
} from "./module-types.js";
