/**
 * The channels this process hosts, by name and bot account: where replies to a chat go, which
 * channels the outbox may claim rows for, what the router starts and stops.
 */
import type { Channel, ChatTarget } from "../channels/types.js";
import type { ChannelAccount } from "../store/repos/outbox-repo.js";

/** Owns the set of running channel instances. */
export class ChannelDirectory {
  readonly #channels = new Map<string, Channel>();

  /** Adds a channel; a second one with the same name and account is a configuration bug. */
  add(channel: Channel): void {
    const key = `${channel.name}:${channel.accountId}`;
    if (this.#channels.has(key)) throw new Error(`channel ${key} is added twice`);
    this.#channels.set(key, channel);
  }

  list(): Channel[] {
    return [...this.#channels.values()];
  }

  /** The channel that delivers to `target`, if this process hosts it. */
  channelFor = (target: Pick<ChatTarget, "channel" | "accountId">): Channel | undefined =>
    this.#channels.get(`${target.channel}:${target.accountId}`);

  /** The (channel, account) pairs hosted here. */
  hosted(): ChannelAccount[] {
    return this.list().map((c) => ({ channel: c.name, accountId: c.accountId }));
  }
}
