/**
 * Contracts of the chaos run (`npm run chaos`): the fake chat platforms it drives, what it
 * records while it kills the gateway, and the summary it prints. Types only.
 */

/** The chat platforms a run can drive. */
export type ChannelName = "telegram" | "slack" | "discord";

/**
 * When a SIGKILL lands. `random`: a uniform delay after "listening on". The others are aimed:
 * - `mid-stream`: the model has streamed at least one text chunk of an answer to the gateway;
 * - `preview-posted`: the platform just stored a bot message whose text is a partial answer;
 * - `reply-stored`: the platform just stored a bot text that is a complete answer;
 * - `reply-held`: the same, with the platform's answer to that call withheld (stored, unknown);
 * - `envelope-unacked` (Slack): an envelope was written to the Socket Mode socket, not yet acked;
 * - `after-ready` (Discord): the fake gateway dispatched READY to the new process's session.
 */
export type KillMoment =
  | "random"
  | "mid-stream"
  | "preview-posted"
  | "reply-stored"
  | "reply-held"
  | "envelope-unacked"
  | "after-ready";

/** A bot write the fake platform stored, as the driver saw it in process. */
export interface BotWrite {
  /** Index of the chat (1-based, as in the message tags). */
  chat: number;
  /** The platform's message id (Telegram message_id, Slack ts, Discord snowflake). */
  messageId: string;
  kind: "post" | "edit" | "delete";
  /** The message's text after the write ("" for a deletion). */
  text: string;
  /** Driver clock (ms since the run started). */
  atMs: number;
}

/** One bot message as the chat shows it at the end. */
export interface ShownMessage {
  messageId: string;
  /** Its final text, edits applied. */
  text: string;
  /** Telegram: when it was first posted (driver clock, as the fake stored it); for Telegram's window. */
  postedAtMs?: number;
  /** Telegram: `<chat_id>:<message_id>` as the gateway's store records it (previews, sent outbox rows). */
  storeKey?: string;
}

/** What one chat shows at the end: the bot's messages, deleted ones left out, in chat order. */
export interface ChatView {
  chat: number;
  messages: ShownMessage[];
}

/** A user message the driver sent. */
export interface SentMessage {
  chat: number;
  /** Its number within its chat, from 1. */
  seq: number;
  text: string;
  atMs: number;
}

/** One SIGKILL. */
export interface KillRecord {
  /** Driver clock. */
  atMs: number;
  /** The moment aimed at (`random` also for an aimed kill whose moment never came). */
  moment: KillMoment;
  /** The aimed moment that did not come within its limit, when the kill fell back to now. */
  missed?: KillMoment;
  /** What the driver observed, e.g. "c3 m17: complete answer stored (held)". */
  observed?: string;
  /** When the killed process printed "listening on" (undefined: killed before it did). */
  listeningAtMs?: number;
  /** Chats with a turn in flight at the kill (a model request seen, its answer not complete). */
  chatsMidTurn: number[];
  /**
   * The bot messages the gateway's store knew once the killed process was dead (store keys of
   * recorded previews and sent outbox rows): a message posted before the kill and not here was
   * never recorded by the process that posted it.
   */
  recorded?: string[];
}

/** One model stream, as the tap in front of the simulator saw it. */
export interface ModelStream {
  chat: number;
  seq: number;
  startMs: number;
  /** When the last byte went to the gateway; undefined when it was cut. */
  endMs?: number;
}

/** A restart's figure: its spawn (and its "listening on") to the first answer completing in a chat it had mid-turn. */
export interface RestartFigure {
  /** Index of the kill this restart followed (0-based). */
  kill: number;
  chat: number;
  /** From the restart's spawn to the chat's next answer, minus the model's own streaming time for that answer, in ms. */
  ms: number;
  /** The same from its "listening on" (start-up left out): a lease wait shows here. */
  afterListeningMs: number;
  /** True when no answer completed before the next kill or the end: `ms` is a lower bound. */
  censored: boolean;
}

/** One problem the verdict found, for the report. */
export interface Problem {
  kind:
    | "lost"
    | "duplicated"
    | "leftover-preview"
    | "telegram-window"
    | "out-of-order"
    | "wrong-chat"
    | "unrecognized"
    | "stall";
  chat: number;
  /** The user message concerned, e.g. "c3 m17". */
  message?: string;
  /** What the chat showed (texts cut to 60 characters), or the figure for a stall. */
  shows: string;
}

/** What the verdict counts, as the summary prints it. */
export interface VerdictCounts {
  answered: number;
  lost: number;
  duplicated: number;
  telegramWindow: number;
  leftoverPreviews: number;
  outOfOrder: number;
  wrongChat: number;
  /** Bot messages that name no message sent (an error notice, a garbled text). */
  unrecognized: number;
  stalls: number;
  restartToAnswerMs: { p50: number | null; max: number | null };
}

/** The printed summary (`--json` prints only this). */
export interface ChaosSummary extends VerdictCounts {
  channel: ChannelName;
  seed: number;
  kills: number;
  killsByMoment: Record<string, number>;
  messages: number;
  chats: number;
  durationS: number;
  /** The first 20 problems. */
  details: Problem[];
  /** Things the run itself noticed: a gateway that exited on its own, a recompile, a missed moment. */
  notes: string[];
}

/** A bot write held by a platform: carried out, its answer never sent. */
export interface HeldReply {
  /** True once a write was caught (and its answer withheld). */
  caught(): boolean;
  /** Stops holding (answers nothing more); call it after the kill, or when the moment never came. */
  disarm(): void;
}

/**
 * A fake chat platform as the run drives it: C direct-message chats with allowed users, the
 * channel's gateway config, the bot's writes as the fake stores them, and what each chat shows.
 */
export interface ChatPlatform {
  readonly channel: ChannelName;
  /** The aimed moments this platform adds to the common ones. */
  readonly ownMoments: readonly KillMoment[];
  /** Starts the fake (on 127.0.0.1) with `chats` chats. */
  start(chats: number): Promise<void>;
  /** The `channels:` section of the gateway config, as YAML lines. */
  configLines(): string[];
  /** A user message in chat `chat` (1-based); never waits for the gateway. */
  send(chat: number, text: string): void;
  /** Calls `listener` synchronously for every bot write the fake stores; returns the unsubscribe. */
  onWrite(listener: (write: BotWrite) => void): () => void;
  /** Withholds the platform's answer to the next bot post or edit whose text passes `test`. */
  holdNextReply(test: (text: string) => boolean): HeldReply;
  /** A gateway process was just spawned (platform moments count from here). */
  spawned(): void;
  /**
   * Resolves with what was observed once one of `ownMoments` happens (for the process spawned
   * last); rejects when `signal` aborts.
   */
  watchOwn(moment: KillMoment, signal: AbortSignal): Promise<string>;
  /** What every chat shows now, in chat order. */
  view(): ChatView[];
  close(): Promise<void>;
}
