/**
 * The platform channels the gateway can run, in one map: each factory turns its config section
 * into one channel per bot account. Platform libraries are imported by the adapters on start,
 * so an unconfigured platform costs nothing.
 */
import { ConfigError } from "../config/load.js";
import type { TelegramSettings } from "../config/schema.js";
import type { Logger } from "../util/logger.js";
import type { RouteRegistrar } from "./http/http-channel.js";
import { TelegramChannel } from "./telegram/telegram-channel.js";
import type { Channel } from "./types.js";

/** What a factory gets besides its settings. */
export interface ChannelFactoryContext {
  server: RouteRegistrar;
  workspaceDir: string;
  commands: ReadonlyArray<{ command: string; description: string }>;
  logger: Logger;
}

export type ChannelFactory<S> = (settings: S, ctx: ChannelFactoryContext) => Channel[];

/** One Telegram bot account, with its settings resolved. */
export interface TelegramAccountPlan {
  accountId: string;
  token: string;
  /** Without trailing slash. */
  apiRoot: string;
  mode: "polling" | "webhook";
  /** Webhook mode: the URL Telegram posts to, its secret, and the gateway path serving it. */
  webhook?: { url: string; secret: string; path: string };
}

/**
 * Resolves every configured Telegram account (`token` is the account "default"). Webhook
 * settings: an account's own `accounts.<id>.webhook` is used as given (path default
 * `/telegram/<id>`). The top-level `webhook` serves the webhook-mode accounts without their
 * own: for one account as given; shared by several, `url` is a base to which `/<id>` is
 * appended and each account is served at `/telegram/<id>`, so every bot gets its own URL and
 * route. Throws ConfigError when two accounts would share a token, a URL or a path.
 */
export function planTelegramAccounts(settings: TelegramSettings): TelegramAccountPlan[] {
  const accounts = Object.entries({
    ...(settings.token ? { default: { token: settings.token } } : {}),
    ...settings.accounts,
  }).map(([accountId, a]: [string, TelegramSettings["accounts"][string]]) => ({
    accountId,
    account: a,
    mode: a.mode ?? settings.mode,
  }));
  const problems: string[] = [];
  const shared = settings.webhook;
  const sharers = accounts.filter((a) => a.mode === "webhook" && !a.account.webhook).map((a) => a.accountId);
  if (shared?.path && sharers.length > 1) {
    problems.push(
      `channels.telegram.webhook.path is set, but ${sharers.length} accounts (${sharers.join(", ")}) share channels.telegram.webhook and one path cannot serve two bots: remove webhook.path (each account is then served at /telegram/<account>) or give each account its own accounts.<id>.webhook`,
    );
  }
  const plans = accounts.map(({ accountId, account, mode }): TelegramAccountPlan => {
    const plan: TelegramAccountPlan = {
      accountId,
      token: account.token,
      apiRoot: (account.apiRoot ?? settings.apiRoot).replace(/\/+$/, ""),
      mode,
    };
    if (mode !== "webhook") return plan;
    const own = account.webhook;
    if (own) {
      plan.webhook = { url: own.url, secret: own.secret, path: own.path ?? `/telegram/${accountId}` };
    } else if (shared && sharers.length === 1) {
      plan.webhook = {
        url: shared.url,
        secret: shared.secret,
        path: shared.path ?? `/telegram/${accountId}`,
      };
    } else if (shared) {
      plan.webhook = {
        url: appendPath(shared.url, accountId),
        secret: shared.secret,
        path: `/telegram/${accountId}`,
      };
    } else {
      problems.push(
        `channels.telegram account ${accountId} is in webhook mode but has no webhook settings: set channels.telegram.webhook {url, secret} or accounts.${accountId}.webhook`,
      );
    }
    return plan;
  });
  const seen = (what: string, value: (p: TelegramAccountPlan) => string | undefined) => {
    const owner = new Map<string, string>();
    for (const p of plans) {
      const v = value(p);
      if (v === undefined) continue;
      const other = owner.get(v);
      if (other)
        problems.push(`channels.telegram accounts ${other} and ${p.accountId} have the same ${what}`);
      else owner.set(v, p.accountId);
    }
  };
  seen("token (one bot can be polled by one account only)", (p) => p.token);
  seen("webhook url", (p) => p.webhook?.url);
  seen("webhook path", (p) => p.webhook?.path);
  if (problems.length > 0) throw new ConfigError(undefined, problems);
  return plans;
}

/** `https://host/base?x` + `bot` → `https://host/base/bot?x`. */
function appendPath(url: string, segment: string): string {
  const u = new URL(url);
  u.pathname = `${u.pathname.replace(/\/+$/, "")}/${encodeURIComponent(segment)}`;
  return u.toString();
}

function telegram(settings: TelegramSettings, ctx: ChannelFactoryContext): Channel[] {
  return planTelegramAccounts(settings).map(
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
        logger: ctx.logger.child({ name: "channel.telegram", account: plan.accountId }),
      }),
  );
}

/** Platform channel factories by config key. */
export const channelFactories = { telegram } satisfies Record<string, ChannelFactory<never>>;
