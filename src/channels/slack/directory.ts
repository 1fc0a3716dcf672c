/**
 * Names and kinds of Slack users and conversations, from `users.info` and
 * `conversations.info`, cached for an hour (a failed lookup for a minute) so a busy channel
 * costs one call per person, not one per message. Concurrent lookups of one id share a call.
 * A lookup never fails the message: without an answer the id stands in for the name.
 */
import type { webApi } from "@slack/bolt";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import { TtlCache } from "../../util/ttl-cache.js";

/** A conversation as the adapter needs it. */
export interface SlackConversation {
  name: string | undefined;
  isIm: boolean;
  isMpim: boolean;
}

const HOUR_MS = 3_600_000;
const FAILED_MS = 60_000;

/** Cached lookups of one workspace's users and conversations (see the file header). */
export class SlackDirectory {
  readonly #client: () => webApi.WebClient | undefined;
  readonly #logger: Logger;
  readonly #users: TtlCache<string, Promise<string>>;
  readonly #conversations: TtlCache<string, Promise<SlackConversation | undefined>>;
  /** Ids whose lookup failed lately: not asked again for a minute. */
  readonly #failed: TtlCache<string, true>;

  constructor(options: { client: () => webApi.WebClient | undefined; clock: Clock; logger: Logger }) {
    this.#client = options.client;
    this.#logger = options.logger;
    const now = () => options.clock.now();
    this.#users = new TtlCache({ maxEntries: 5_000, ttlMs: HOUR_MS, now });
    this.#conversations = new TtlCache({ maxEntries: 5_000, ttlMs: HOUR_MS, now });
    this.#failed = new TtlCache({ maxEntries: 5_000, ttlMs: FAILED_MS, now });
  }

  /** The person's display name, else real name, else handle, else the id. */
  userName(userId: string): Promise<string> {
    return this.#cached(this.#users, userId, userId, async (client) => {
      const res = await client.users.info({ user: userId });
      const u = res.user;
      return u?.profile?.display_name || u?.real_name || u?.profile?.real_name || u?.name || userId;
    });
  }

  /** The conversation's name and kind, or undefined when Slack will not say. */
  conversation(channelId: string): Promise<SlackConversation | undefined> {
    return this.#cached(this.#conversations, channelId, undefined, async (client) => {
      const res = await client.conversations.info({ channel: channelId });
      const c = res.channel;
      return c ? { name: c.name, isIm: c.is_im === true, isMpim: c.is_mpim === true } : undefined;
    });
  }

  #cached<T>(
    cache: TtlCache<string, Promise<T>>,
    id: string,
    fallback: T,
    lookup: (client: webApi.WebClient) => Promise<T>,
  ): Promise<T> {
    const hit = cache.get(id);
    if (hit) return hit;
    const client = this.#client();
    if (!client || this.#failed.has(id)) return Promise.resolve(fallback);
    const pending = lookup(client).catch((err: unknown) => {
      this.#logger.debug({ err, id }, "Slack lookup failed; using the id");
      cache.delete(id);
      this.#failed.set(id, true);
      return fallback;
    });
    cache.set(id, pending);
    return pending;
  }
}
