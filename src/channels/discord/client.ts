/**
 * The discord.js client as the channel runs it: the options (intents Guilds, GuildMessages,
 * DirectMessages and the privileged MessageContent; `Partials.Channel` so DMs arrive; caches
 * bounded so memory stays flat however many messages pass; REST throttled, long 429s handed back
 * to the outbox), and the slash commands registered for the application.
 */
import type { Client, ClientOptions } from "discord.js";
import type { Logger } from "../../util/logger.js";
import { toDiscordFailure } from "./errors.js";

/** Where the chat commands are registered: globally, in these servers, or not at all. */
export type SlashCommandScope =
  | { scope: "global" }
  | { scope: "guilds"; guildIds: readonly string[] }
  | { scope: "off" };

/** The settings the client options read. */
export interface ClientSettings {
  apiUrl: string;
  restRequestsPerSecond: number;
  maxRateLimitWaitMs: number;
  /** Tests: skip discord.js's 5 s spacing between identifies. */
  fastIdentify?: boolean;
}

/** The client's options (see the file header). */
export function discordClientOptions(dj: typeof import("discord.js"), o: ClientSettings): ClientOptions {
  const { GatewayIntentBits: I, Options } = dj;
  return {
    intents: [I.Guilds, I.GuildMessages, I.DirectMessages, I.MessageContent],
    partials: [dj.Partials.Channel],
    failIfNotExists: false,
    allowedMentions: { parse: [], repliedUser: false },
    // Bounded caches: a message is read when it arrives and never again (a replied-to one is
    // fetched if gone), people and members are cached only as far as names need.
    makeCache: Options.cacheWithLimits({
      MessageManager: 25,
      UserManager: { maxSize: 2_000, keepOverLimit: (u) => u.id === u.client.user?.id },
      GuildMemberManager: { maxSize: 500, keepOverLimit: (m) => m.id === m.client.user?.id },
      PresenceManager: 0,
      ReactionManager: 0,
      ReactionUserManager: 0,
      VoiceStateManager: 0,
      StageInstanceManager: 0,
      GuildStickerManager: 0,
      GuildScheduledEventManager: 0,
      GuildInviteManager: 0,
      GuildBanManager: 0,
      ThreadMemberManager: 0,
      AutoModerationRuleManager: 0,
      ApplicationCommandManager: 0,
      GuildEmojiManager: 0,
    }),
    sweepers: {
      ...Options.DefaultSweeperSettings,
      messages: { interval: 300, lifetime: 600 },
    },
    rest: {
      api: o.apiUrl,
      // Waits come from Reset-After/Retry-After, relative times: no clock-skew margin needed.
      offset: 0,
      retries: 1,
      timeout: 15_000,
      globalRequestsPerSecond: o.restRequestsPerSecond,
      // A short 429 is sat out in the library's bucket; a long one fails the send, and the
      // outbox retries it after Retry-After instead of holding the bucket.
      rejectOnRateLimit: (limit) => limit.retryAfter > o.maxRateLimitWaitMs,
    },
    ...(o.fastIdentify
      ? { ws: { buildIdentifyThrottler: () => ({ waitForIdentify: async () => {} }) } }
      : {}),
  } as ClientOptions;
}

/** Registers the chat commands (best effort: a failure is logged, chat still works). */
/** The one text option of the slash commands that take an argument, by command. */
export const SLASH_ARGUMENT: Readonly<Record<string, string>> = { model: "model", task: "goal" };
const ARGUMENT_HELP: Readonly<Record<string, string>> = {
  model: "provider/model, or default",
  task: "the goal, or: cancel <id>",
};

export async function registerCommands(
  client: Client,
  commands: ReadonlyArray<{ command: string; description: string }>,
  scope: SlashCommandScope,
  logger: Logger,
): Promise<void> {
  const appId = client.application?.id;
  if (scope.scope === "off" || !appId) return;
  const body = commands.map((c) => ({
    name: c.command,
    description: c.description.slice(0, 100),
    type: 1,
    ...(SLASH_ARGUMENT[c.command]
      ? {
          options: [
            {
              type: 3,
              name: SLASH_ARGUMENT[c.command],
              description: ARGUMENT_HELP[c.command],
              required: false,
            },
          ],
        }
      : {}),
  }));
  const routes =
    scope.scope === "global"
      ? [`/applications/${appId}/commands` as const]
      : scope.guildIds.map((g) => `/applications/${appId}/guilds/${g}/commands` as const);
  for (const route of routes) {
    try {
      await client.rest.put(route, { body });
    } catch (err) {
      logger.warn({ route, err: toDiscordFailure(err).description }, "slash commands not registered");
      continue;
    }
    logger.debug({ route, commands: body.length }, "slash commands registered");
  }
}
