/**
 * Discord's settings: the `channels.discord` schema (built from the shared access fragment, with
 * Discord's `guilds` — server id → allowed channels and a mention rule — in place of a flat group
 * list), its bot accounts resolved into plans, and the group rule the access policy applies.
 */
import { z } from "zod";
import { ConfigError } from "../../util/config-error.js";
import { section } from "../../util/zod-sections.js";
import type { GroupRule } from "../access-policy.js";
import { accessSettingsShape } from "../access-policy.js";
import { accountId, clashes } from "../accounts.js";
import type { InboundMessage } from "../types.js";

/** Discord's REST root (discord.js appends /v10): the default of `apiUrl`. */
export const DISCORD_API_URL = "https://discord.com/api";

/** A Discord id (snowflake): digits, written in quotes in YAML so it is read exactly. */
export const snowflake = z
  .union([z.string(), z.number().int()])
  .transform(String)
  .pipe(z.string().regex(/^\d{1,20}$/, { message: 'expected a Discord id such as "123456789012345678"' }));

const token = z
  .string()
  .min(20, { message: "expected a bot token (Developer Portal → Bot → Reset Token)" })
  .refine((t) => !/^Bot\s/i.test(t), { message: 'write the token without the "Bot " prefix' });

const discordAccount = z.strictObject({
  token,
  apiUrl: z.url().optional(),
});

const guildRule = z.preprocess(
  (v) => v ?? {},
  z.strictObject({
    /** Channel ids the bot answers in (threads follow their parent); empty: every channel. */
    channels: z.array(snowflake).default([]),
    /** Overrides `requireMention` in this server. */
    requireMention: z.boolean().optional(),
  }),
);

const { groups: _groups, ...sharedAccess } = accessSettingsShape;

/** `channels.discord`: one or more bot accounts plus the access policy they share. */
export const discordSettings = section({
  enabled: z.boolean().default(true),
  /** Bot token, usually ${DISCORD_BOT_TOKEN}: shorthand for accounts.default.token. */
  token: token.optional(),
  /** REST root (discord.js `rest.api`); the gateway URL comes from its /gateway/bot. Tests: a fake. */
  apiUrl: z.url().default(DISCORD_API_URL),
  accounts: z.preprocess((v) => v ?? {}, z.record(accountId, discordAccount)),
  ...sharedAccess,
  /** Server (guild) id → the channels allowed there and its mention rule (groupPolicy allowlist). */
  guilds: z.preprocess((v) => v ?? {}, z.record(z.string().regex(/^\d{1,20}$/), guildRule)),
  /**
   * Where /new, /stop, /status and /help are registered: `auto` — in each configured server
   * (available at once) or, with none, globally (Discord may take up to an hour); or `off`.
   */
  slashCommands: z.enum(["auto", "global", "guilds", "off"]).default("auto"),
  /** Longest text one message carries (Discord's limit is 2,000). */
  maxMessageChars: z.number().int().min(200).max(2_000).default(2_000),
  /** Most lines one message carries (Discord clients collapse taller messages). */
  maxLinesPerMessage: z.number().int().min(3).max(200).default(17),
  /**
   * REST requests per second for the whole bot (discord.js's global throttle; Discord allows 50).
   */
  restRequestsPerSecond: z.number().int().min(1).max(10_000).default(50),
  /**
   * After a restart, messages sent in the chats the bot talked in during this many hours are
   * read from each channel's history and answered (Discord does not redeliver them); 0: off.
   */
  catchUpHours: z.number().min(0).max(168).default(6),
  /** A 429 wait longer than this is not sat out in the library: the outbox retries the send later (ms). */
  maxRateLimitWaitMs: z.number().int().min(0).max(600_000).default(5_000),
}).refine((s) => !s.enabled || s.token !== undefined || Object.keys(s.accounts).length > 0, {
  message: "set channels.discord.token (e.g. ${DISCORD_BOT_TOKEN}) or channels.discord.accounts",
});

/** `channels.discord` as parsed. */
export type DiscordSettings = z.output<typeof discordSettings>;

/** One Discord bot (application), with its settings resolved. */
export interface DiscordAccountPlan {
  accountId: string;
  token: string;
  /** REST root without a trailing slash. */
  apiUrl: string;
}

/** Resolves every configured bot (`token` is the account "default"); throws ConfigError on a shared token. */
export function planDiscordAccounts(settings: DiscordSettings): DiscordAccountPlan[] {
  const entries = Object.entries({
    ...(settings.token ? { default: { token: settings.token } } : {}),
    ...settings.accounts,
  }) as Array<[string, z.output<typeof discordAccount>]>;
  const plans = entries.map(
    ([id, a]): DiscordAccountPlan => ({
      accountId: id,
      token: a.token,
      apiUrl: (a.apiUrl ?? settings.apiUrl).replace(/\/+$/, ""),
    }),
  );
  const problems = clashes(
    "channels.discord",
    plans,
    "token (one Discord bot can be run by one account only)",
    (p) => p.token,
  );
  if (problems.length > 0) throw new ConfigError(undefined, problems);
  return plans;
}

/**
 * The allowlist rule of `guilds`: a server must be listed; its `channels`, when given, name the
 * channels (a thread counts as its parent channel, `chatId`); its `requireMention` wins.
 */
export function discordGroupRule(guilds: DiscordSettings["guilds"]): (message: InboundMessage) => GroupRule {
  return (message) => {
    const guild = message.serverId === undefined ? undefined : guilds[message.serverId];
    if (!guild)
      return {
        listed: false,
        reason: `server ${message.serverId ?? "?"} is not in channels.discord.guilds`,
      };
    if (guild.channels.length > 0 && !guild.channels.includes(message.chatId))
      return {
        listed: false,
        reason: `channel ${message.chatId} is not in channels.discord.guilds.${message.serverId}.channels`,
      };
    return guild.requireMention === undefined
      ? { listed: true }
      : { listed: true, requireMention: guild.requireMention };
  };
}
