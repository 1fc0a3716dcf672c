/**
 * The channels this process hosts, by name and bot account: where replies to a chat go, which
 * channels the outbox may claim rows for, what the router starts and stops. An exclusive channel
 * (Channel.exclusive) is on standby until this process holds its resource lease: meanwhile it is
 * not started and not hosted — the outbox claims none of its rows, the holder sends them — and
 * its status says so. `channelFor` still finds it: a turn that runs here formats its reply for
 * the platform (`prepare`) whichever node sends it, and its typing and previews are dropped as
 * for any channel not connected yet.
 */
import type { Channel, ChannelHealth, ChatTarget } from "../channels/types.js";
import type { ChannelAccount } from "../store/repos/outbox-repo.js";

/** Owns the set of running channel instances. */
export class ChannelDirectory {
  readonly #channels = new Map<string, Channel>();
  /** Exclusive channels whose resource lease this process does not hold now, by key. */
  readonly #standby = new Set<string>();

  /** Adds a channel (an exclusive one on standby); a second one with the same name and account is a configuration bug. */
  add(channel: Channel): void {
    const key = keyOf(channel);
    if (this.#channels.has(key)) throw new Error(`channel ${key} is added twice`);
    this.#channels.set(key, channel);
    if (channel.exclusive) this.#standby.add(key);
  }

  /** Every channel, hosted or on standby (to stop them all). */
  list(): Channel[] {
    return [...this.#channels.values()];
  }

  /** Marks an exclusive channel held here (`true`: it runs and is hosted) or on standby. */
  setHeld(channel: Channel, held: boolean): void {
    if (held) this.#standby.delete(keyOf(channel));
    else this.#standby.add(keyOf(channel));
  }

  /** The channel of `target`, if this process has it (hosted or on standby). */
  channelFor = (target: Pick<ChatTarget, "channel" | "accountId">): Channel | undefined =>
    this.#channels.get(`${target.channel}:${target.accountId}`);

  /** The (channel, account) pairs hosted here. */
  hosted(): ChannelAccount[] {
    return this.list()
      .filter((c) => !this.#standby.has(keyOf(c)))
      .map((c) => ({ channel: c.name, accountId: c.accountId }));
  }

  /** A channel's health for status; one on standby says another node holds its connection. */
  health(channel: Channel): ChannelHealth | undefined {
    if (this.#standby.has(keyOf(channel)))
      return {
        state: "standby",
        detail: "another node holds this connection; this one takes over if it stops",
      };
    return channel.health?.();
  }
}

function keyOf(channel: Channel): string {
  return `${channel.name}:${channel.accountId}`;
}
