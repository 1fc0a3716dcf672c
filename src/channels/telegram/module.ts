/**
 * The Telegram channel module: `channels.telegram` settings, one TelegramChannel per bot
 * account with the access policy they share, and doctor's check of every token (getMe).
 * The adapter is imported only when the channel is configured, and grammY when it starts.
 */
import { networkReason } from "../../util/network-reason.js";
import { ChannelAccessPolicy } from "../access-policy.js";
import { previewLedger } from "../preview-ledger.js";
import type { ChannelCheck, ChannelModule } from "../types.js";
import {
  type TelegramAccountPlan,
  type TelegramSettings,
  planTelegramAccounts,
  telegramSettings,
} from "./settings.js";

const settings = telegramSettings.optional();

/** Telegram: `channels.telegram` (absent: off). */
export const telegramModule: ChannelModule<typeof settings> = {
  settings,
  enabled: (settings) => settings?.enabled === true,
  accounts: (settings) => planTelegramAccounts(settings).map((p) => p.accountId),
  async create(settings, ctx) {
    const { TelegramChannel } = await import("./telegram-channel.js");
    const channels = planTelegramAccounts(settings).map(
      (plan) =>
        new TelegramChannel({
          ...plan,
          server: ctx.server,
          mentionPatterns: settings.mentionPatterns,
          streaming: settings.streaming,
          mediaMaxBytes: Math.round(settings.mediaMaxMb * 1_048_576),
          workspaceDir: ctx.workspaceDir,
          pollTimeoutSeconds: settings.pollTimeoutSeconds,
          commands: ctx.commands,
          ...(ctx.leaseRemainingMs ? { leaseRemainingMs: ctx.leaseRemainingMs } : {}),
          ...(ctx.previews
            ? { previewLedger: previewLedger(ctx.previews, "telegram", plan.accountId, ctx.clock) }
            : {}),
          logger: ctx.logger.child({ name: "channel.telegram", account: plan.accountId }),
          clock: ctx.clock,
        }),
    );
    const access = new ChannelAccessPolicy({
      channel: "telegram",
      ...settings,
      pairing: ctx.pairing,
      clock: ctx.clock,
      logger: ctx.logger.child({ name: "gateway.access", channel: "telegram" }),
    });
    return { channels, access };
  },
  async probe(settings, { timeoutMs }) {
    // The accounts exactly as the gateway would run them, with the same clash checks (which
    // throw ConfigError: the caller reports those as failed checks).
    const accounts = planTelegramAccounts(settings);
    return Promise.all(accounts.map((a) => probeAccount(a, tokenKey(settings, a.accountId), timeoutMs)));
  },
};

/** Where an account's token is configured, for messages (never the token itself). */
function tokenKey(settings: TelegramSettings, accountId: string): string {
  return accountId in settings.accounts
    ? `channels.telegram.accounts.${accountId}.token`
    : "channels.telegram.token";
}

/** getMe with the configured token against the configured apiRoot: token rejected vs unreachable. */
async function probeAccount(
  account: TelegramAccountPlan,
  tokenKey: string,
  timeoutMs: number,
): Promise<ChannelCheck> {
  const root = account.apiRoot;
  const what = `telegram:${account.accountId}`;
  const how = account.mode === "webhook" ? `webhook at ${account.webhook?.url ?? "?"}` : "long polling";
  let res: Response;
  try {
    res = await fetch(`${root}/bot${account.token}/getMe`, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    return {
      verdict: "fail",
      what,
      detail: `cannot reach Telegram at ${root}: ${networkReason(err, timeoutMs)} (check the network, or apiRoot)`,
    };
  }
  const body = (await res.json().catch(() => undefined)) as
    | { ok?: boolean; result?: { username?: string; id?: number }; description?: string }
    | undefined;
  if (res.ok && body?.ok === true) {
    const bot = body.result;
    return {
      verdict: "ok",
      what,
      detail: `token accepted: bot @${bot?.username ?? "?"} (id ${bot?.id ?? "?"}) at ${root}, receiving by ${how}`,
    };
  }
  if (res.status === 401 || res.status === 404) {
    return {
      verdict: "fail",
      what,
      detail: `token rejected by Telegram at ${root} (HTTP ${res.status}${body?.description ? ` ${body.description}` : ""}): check ${tokenKey}; BotFather's /token shows the current one`,
    };
  }
  return {
    verdict: "warn",
    what,
    detail: `Telegram at ${root} answered getMe with HTTP ${res.status}${body?.description ? ` (${body.description})` : ""}`,
  };
}
