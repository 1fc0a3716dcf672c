/**
 * The Discord channel module: `channels.discord` settings, one DiscordChannel per bot with the
 * access policy they share (DM policy and pairing, then `guilds`: servers, their channels and
 * their mention rule), and doctor's checks (the token by `users/@me`; the privileged Message
 * Content intent by the application's flags). The adapter is imported only when the channel is
 * configured, and discord.js when it starts.
 */
import { networkReason } from "../../util/network-reason.js";
import { ChannelAccessPolicy } from "../access-policy.js";
import { previewLedger } from "../preview-ledger.js";
import type { ChannelCheck, ChannelModule } from "../types.js";
import {
  type DiscordAccountPlan,
  discordGroupRule,
  discordSettings,
  planDiscordAccounts,
} from "./settings.js";

const settings = discordSettings.optional();

/** Application flags that mean the Message Content intent is on (verified apps, and the rest). */
const GATEWAY_MESSAGE_CONTENT = 1 << 18;
const GATEWAY_MESSAGE_CONTENT_LIMITED = 1 << 19;

/**
 * Permissions the invite URL in the README asks for, and no more: View Channels, Send Messages,
 * Read Message History, Send Messages in Threads.
 */
export const DISCORD_PERMISSIONS = (1n << 10n) | (1n << 11n) | (1n << 16n) | (1n << 38n);

/** Discord: `channels.discord` (absent: off). */
export const discordModule: ChannelModule<typeof settings> = {
  settings,
  enabled: (settings) => settings?.enabled === true,
  accounts: (settings) => planDiscordAccounts(settings).map((p) => p.accountId),
  async create(settings, ctx) {
    const { DiscordChannel } = await import("./discord-channel.js");
    const guildIds = Object.keys(settings.guilds);
    const slashCommands =
      settings.slashCommands === "off"
        ? ({ scope: "off" } as const)
        : settings.slashCommands === "global" || (settings.slashCommands === "auto" && guildIds.length === 0)
          ? ({ scope: "global" } as const)
          : ({ scope: "guilds", guildIds } as const);
    const channels = planDiscordAccounts(settings).map(
      (plan) =>
        new DiscordChannel({
          ...plan,
          mentionPatterns: settings.mentionPatterns,
          streaming: settings.streaming,
          maxMessageChars: settings.maxMessageChars,
          maxLinesPerMessage: settings.maxLinesPerMessage,
          mediaMaxBytes: Math.round(settings.mediaMaxMb * 1_048_576),
          workspaceDir: ctx.workspaceDir,
          commands: ctx.commands,
          slashCommands,
          restRequestsPerSecond: settings.restRequestsPerSecond,
          maxRateLimitWaitMs: settings.maxRateLimitWaitMs,
          catchUpMs: settings.catchUpHours * 3_600_000,
          ...(ctx.previews
            ? { previewLedger: previewLedger(ctx.previews, "discord", plan.accountId, ctx.clock) }
            : {}),
          ...(ctx.lastTaken
            ? {
                lastTaken: (since: number) =>
                  ctx.lastTaken?.("discord", plan.accountId, since) ?? Promise.resolve([]),
              }
            : {}),
          onReconnected: () => ctx.signals.reconnected("discord", plan.accountId),
          logger: ctx.logger.child({ name: "channel.discord", account: plan.accountId }),
          clock: ctx.clock,
        }),
    );
    const access = new ChannelAccessPolicy({
      channel: "discord",
      ...settings,
      groups: [],
      groupRule: discordGroupRule(settings.guilds),
      pairing: ctx.pairing,
      clock: ctx.clock,
      logger: ctx.logger.child({ name: "gateway.access", channel: "discord" }),
    });
    return { channels, access };
  },
  async probe(settings, { timeoutMs }) {
    const checks = await Promise.all(planDiscordAccounts(settings).map((a) => probeAccount(a, timeoutMs)));
    return checks.flat();
  },
};

/** One REST GET with the bot token, bounded by `timeoutMs`. */
async function get(
  account: DiscordAccountPlan,
  route: string,
  timeoutMs: number,
): Promise<{ status: number; body: Record<string, unknown> | undefined }> {
  const res = await fetch(`${account.apiUrl}/v10${route}`, {
    headers: { authorization: `Bot ${account.token}` },
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
  return { status: res.status, body };
}

/** users/@me (token rejected vs unreachable), then the application's Message Content flag. */
async function probeAccount(account: DiscordAccountPlan, timeoutMs: number): Promise<ChannelCheck[]> {
  const what = `discord:${account.accountId}`;
  const key =
    account.accountId === "default"
      ? "channels.discord.token"
      : `channels.discord.accounts.${account.accountId}.token`;
  let me: Awaited<ReturnType<typeof get>>;
  try {
    me = await get(account, "/users/@me", timeoutMs);
  } catch (err) {
    return [
      {
        verdict: "fail",
        what,
        detail: `cannot reach Discord at ${account.apiUrl}: ${networkReason(err, timeoutMs)} (check the network, or apiUrl)`,
      },
    ];
  }
  if (me.status === 401)
    return [
      {
        verdict: "fail",
        what,
        detail: `bot token rejected by Discord (401): check ${key} (Developer Portal → your application → Bot → Reset Token)`,
      },
    ];
  if (me.status !== 200 || typeof me.body?.id !== "string")
    return [{ verdict: "fail", what, detail: `Discord answered HTTP ${me.status} to users/@me` }];
  const bot = `bot ${String(me.body.username ?? "?")} (${me.body.id})`;
  const checks: ChannelCheck[] = [{ verdict: "ok", what, detail: `token accepted: ${bot}` }];
  try {
    const app = await get(account, "/applications/@me", timeoutMs);
    const flags = typeof app.body?.flags === "number" ? app.body.flags : undefined;
    if (flags === undefined)
      checks.push({
        verdict: "warn",
        what: `${what} intents`,
        detail: `could not read the application's intents (HTTP ${app.status})`,
      });
    else if ((flags & (GATEWAY_MESSAGE_CONTENT | GATEWAY_MESSAGE_CONTENT_LIMITED)) === 0)
      checks.push({
        verdict: "fail",
        what: `${what} intents`,
        detail:
          "the Message Content intent is off: Developer Portal → your application → Bot → Privileged Gateway Intents → MESSAGE CONTENT INTENT (without it the gateway closes with 4014)",
      });
    else checks.push({ verdict: "ok", what: `${what} intents`, detail: "Message Content intent enabled" });
  } catch (err) {
    checks.push({
      verdict: "warn",
      what: `${what} intents`,
      detail: `could not read the application: ${networkReason(err, timeoutMs)}`,
    });
  }
  return checks;
}
