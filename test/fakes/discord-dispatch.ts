/**
 * What the fake Discord dispatches on its gateway, and to whom: READY for a new session, and
 * message, thread and interaction events gated by each session's intents (GuildMessages or
 * DirectMessages, Guilds) with content blanked for sessions without MessageContent.
 */
import type { Gateway } from "./discord-gateway.js";
import type { DiscordStore } from "./discord-store.js";
import type { DiscordMessage, DiscordUser } from "./discord-types.js";
import { Intent, blankIfHidden, gatewayMessage } from "./discord-wire.js";

/** Builds READY and sends the fake's events through the gateway. */
export class Dispatcher {
  readonly #gateway: () => Gateway;
  readonly #store: DiscordStore;
  readonly #bot: DiscordUser;
  readonly #application: { id: string; flags: number };

  constructor(deps: {
    gateway: () => Gateway;
    store: DiscordStore;
    bot: DiscordUser;
    application: { id: string; flags: number };
  }) {
    this.#gateway = deps.gateway;
    this.#store = deps.store;
    this.#bot = deps.bot;
    this.#application = deps.application;
  }

  /** READY.d without session_id / resume_gateway_url (the gateway adds those). */
  ready(): Record<string, unknown> {
    return {
      v: 10,
      user: { ...this.#bot, bot: true, verified: true, mfa_enabled: false, flags: 0, email: null },
      user_settings: {},
      guilds: [...this.#store.guilds.keys()].map((id) => ({ id, unavailable: true })),
      private_channels: [],
      relationships: [],
      presences: [],
      guild_join_requests: [],
      geo_ordered_rtc_regions: [],
      session_type: "normal",
      shard: [0, 1],
      application: { ...this.#application },
      auth: {},
      _trace: ['["fake-gateway",{}]'],
    };
  }

  /** MESSAGE_CREATE / MESSAGE_UPDATE to sessions with the intent for the channel. */
  message(t: "MESSAGE_CREATE" | "MESSAGE_UPDATE", message: DiscordMessage): void {
    const intent = this.#messageIntent(message.channel_id);
    const d = structuredClone(gatewayMessage(message, this.#store));
    this.#gateway().dispatch(t, (intents) => {
      if (!(intents & intent)) return undefined;
      return intents & Intent.MessageContent ? d : blankIfHidden(d, this.#store, this.#bot.id);
    });
  }

  /** MESSAGE_DELETE to sessions with the intent for the channel. */
  delete(message: DiscordMessage): void {
    const intent = this.#messageIntent(message.channel_id);
    const guildId = this.#store.channel(message.channel_id)?.guildId;
    const d = { id: message.id, channel_id: message.channel_id, ...(guildId ? { guild_id: guildId } : {}) };
    this.#gateway().dispatch("MESSAGE_DELETE", (intents) => (intents & intent ? d : undefined));
  }

  /** THREAD_CREATE to sessions with the Guilds intent. */
  thread(wire: Record<string, unknown>): void {
    this.#gateway().dispatch("THREAD_CREATE", (intents) =>
      intents & Intent.Guilds ? structuredClone(wire) : undefined,
    );
  }

  /** INTERACTION_CREATE to every session (interactions need no intent). */
  interaction(payload: Record<string, unknown>): void {
    this.#gateway().dispatch("INTERACTION_CREATE", () => structuredClone(payload));
  }

  #messageIntent(channelId: string): number {
    return this.#store.channel(channelId)?.type === 1 ? Intent.DirectMessages : Intent.GuildMessages;
  }
}
