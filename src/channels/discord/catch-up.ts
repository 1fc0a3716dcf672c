/**
 * Discord intake order, and what a restart missed. Discord keeps nothing for a bot that was
 * away (a new process starts a new gateway session, no RESUME), so a restarted gateway reads
 * what it missed from each chat's history — and must take it before anything newer of the same
 * chat, or a live message would be answered first and move the chat's "newest taken" marker
 * past the missed ones for good. So every message goes through one queue per Discord channel
 * (thread or DM included): live messages in arrival order, behind the chat's catch-up.
 *
 * - A chat the inbox took messages from within `catchUpMs` is read from its newest taken
 *   message on; its catch-up is queued before the client logs in, so no live message of it can
 *   pass it.
 * - A chat the inbox does not know (a person's first DM arrived while the gateway was away) is
 *   read back when its first live message comes: what it holds since the previous gateway last
 *   took a message, and before this one. (A bot cannot list DMs it has not seen: until the
 *   person writes again, such a chat is not known to exist.)
 *
 * Everything read goes through intake like a live message; the inbox drops what it has.
 */
import type { Client, Message } from "discord.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import { snowflakeAt } from "./discord-sender.js";
import { toDiscordFailure } from "./errors.js";

/** The newest message the inbox took from one chat, and when. */
export interface ChatMarker {
  chatId: string;
  threadId?: string;
  platformMessageId: string;
  /** Epoch ms the inbox took it. */
  receivedAt?: number;
}

export interface DiscordCatchUpOptions {
  /** How far back a restart reads (ms); 0: not at all. */
  catchUpMs: number;
  /** The newest message taken from each chat since a time (the inbox's). */
  lastTaken?(since: number): Promise<ChatMarker[]>;
  /** Takes one message through intake; never rejects. */
  take(message: Message): Promise<void>;
  clock: Clock;
  logger: Logger;
}

/** Pages of 100 messages read from one chat at most. */
const MAX_PAGES = 10;
/** The previous gateway's last intake, less this, bounds what an unknown chat is read back to. */
const BACKFILL_MARGIN_MS = 60_000;

/** Owns the per-channel intake queues and the catch-up after a restart (see the file header). */
export class DiscordCatchUp {
  readonly #o: DiscordCatchUpOptions;
  readonly #queues = new Map<string, Promise<void>>();
  /** Channels that are caught up, being caught up, or were seen live: not read back again. */
  readonly #known = new Set<string>();
  #client: Client | undefined;
  #whenReady: Promise<Client>;
  #ready: (client: Client) => void = () => {};
  /** When this process started taking messages, and when the previous one last took one. */
  #startedAt = 0;
  #previousIntakeAt: number | undefined;
  #prepared = false;

  constructor(options: DiscordCatchUpOptions) {
    this.#o = options;
    this.#whenReady = new Promise((resolve) => {
      this.#ready = resolve;
    });
  }

  /**
   * Before the first login of this process: reads the markers and queues each chat's catch-up,
   * to run once the client is ready (`ready`). Never throws.
   */
  async prepare(): Promise<void> {
    if (this.#prepared) return;
    this.#prepared = true;
    const o = this.#o;
    this.#startedAt = o.clock.now();
    if (!o.lastTaken || o.catchUpMs <= 0) return;
    const since = this.#startedAt - o.catchUpMs;
    let markers: ChatMarker[];
    try {
      markers = await o.lastTaken(since);
    } catch (err) {
      o.logger.warn({ err }, "discord: cannot read where each chat was left; nothing is caught up");
      return;
    }
    for (const m of markers) {
      if (m.receivedAt !== undefined && m.receivedAt > (this.#previousIntakeAt ?? 0))
        this.#previousIntakeAt = m.receivedAt;
      if (!/^\d+$/.test(m.platformMessageId)) continue; // a slash command, not a message
      const channelId = m.threadId ?? m.chatId;
      this.#known.add(channelId);
      this.#enqueue(channelId, async () => {
        const client = await this.#whenReady;
        const channel = await client.channels.fetch(channelId).catch(() => null);
        if (!channel?.isTextBased()) return;
        await this.#readAfter(channel.messages, m.platformMessageId, since, undefined);
      });
    }
  }

  /** The client is ready (logged in): queued catch-ups run; live messages flow. */
  ready(client: Client): void {
    this.#client = client;
    this.#ready(client);
  }

  /** The client is gone (stop, halt): queued work of it is dropped as it comes up. */
  stop(): void {
    this.#client = undefined;
  }

  /** A live message: taken after everything queued for its channel (see the file header). */
  live(message: Message): void {
    const channelId = message.channelId;
    const readBack = !this.#known.has(channelId) && this.#readsBack();
    if (readBack) this.#known.add(channelId);
    this.#enqueue(channelId, async () => {
      if (readBack) {
        await this.#whenReady;
        const after = snowflakeAt(
          Math.max((this.#previousIntakeAt ?? 0) - BACKFILL_MARGIN_MS, this.#startedAt - this.#o.catchUpMs),
        );
        await this.#readAfter(message.channel.messages, after, 0, message.id);
      }
      await this.#o.take(message);
    });
  }

  /** Whether an unknown chat is read back: only after a previous gateway, within the window. */
  #readsBack(): boolean {
    return (
      this.#previousIntakeAt !== undefined &&
      this.#o.catchUpMs > 0 &&
      this.#o.clock.now() - this.#startedAt < this.#o.catchUpMs
    );
  }

  /**
   * Takes, oldest first, the chat's messages after `after` created since `since` (and before the
   * message `before`, when given), up to MAX_PAGES pages. Failures are logged: the chat is not
   * caught up.
   */
  async #readAfter(
    messages: Pick<Message["channel"]["messages"], "fetch">,
    after: string,
    since: number,
    before: string | undefined,
  ): Promise<void> {
    const o = this.#o;
    let cursor = after;
    let taken = 0;
    try {
      for (let page = 0; page < MAX_PAGES; page++) {
        if (!this.#client) return;
        const batch = await messages.fetch({ after: cursor, limit: 100 });
        const ordered = [...batch.values()].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
        for (const message of ordered) {
          if (before !== undefined && BigInt(message.id) >= BigInt(before)) return;
          if (message.createdTimestamp < since) continue;
          await o.take(message);
          taken++;
        }
        const last = ordered.at(-1);
        if (batch.size < 100 || !last) return;
        cursor = last.id;
      }
    } catch (err) {
      o.logger.warn({ err: toDiscordFailure(err).description, after }, "discord: a chat was not caught up");
    } finally {
      if (taken > 0)
        o.logger.info({ messages: taken }, "discord: took messages sent while the gateway was away");
    }
  }

  /** Runs `task` after everything queued for the channel; the queue goes once it is empty. */
  #enqueue(channelId: string, task: () => Promise<void>): void {
    const tail: Promise<void> = (this.#queues.get(channelId) ?? Promise.resolve())
      .then(task)
      .catch((err: unknown) => this.#o.logger.error({ err, channelId }, "discord intake failed"))
      .finally(() => {
        if (this.#queues.get(channelId) === tail) this.#queues.delete(channelId);
      });
    this.#queues.set(channelId, tail);
  }
}
