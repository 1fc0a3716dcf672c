/**
 * Telegram's settings: the `channels.telegram` schema (built from the shared access fragment),
 * and its bot accounts resolved into plans with their webhook URLs and routes.
 */
import { z } from "zod";
import { ConfigError } from "../../util/config-error.js";
import { nullAsUnset, section } from "../../util/zod-sections.js";
import { accessSettingsShape } from "../access-policy.js";
import { accountId, clashes } from "../accounts.js";

const telegramWebhook = z.strictObject({
  /** Public HTTPS URL Telegram posts updates to; it must reach this gateway's `path`. */
  url: z.url(),
  /** Checked on every delivery (X-Telegram-Bot-Api-Secret-Token). */
  secret: z.string().regex(/^[A-Za-z0-9_-]{1,256}$/, { message: "expected 1-256 letters, digits, _ or -" }),
  /** Path on the gateway's HTTP server; default /telegram/<account>. */
  path: z.string().startsWith("/").optional(),
});

const telegramAccount = z.strictObject({
  token: z.string().min(1),
  apiRoot: z.url().optional(),
  mode: z.enum(["polling", "webhook"]).optional(),
  webhook: nullAsUnset(telegramWebhook),
});

/** `channels.telegram`: one or more bot accounts plus the access policy they share. */
export const telegramSettings = section({
  enabled: z.boolean().default(true),
  /** Bot token from BotFather, usually ${TELEGRAM_BOT_TOKEN}: shorthand for accounts.default.token. */
  token: z.string().min(1).optional(),
  /** Bot API root; set it for a local Bot API server (and in tests). */
  apiRoot: z.url().default("https://api.telegram.org"),
  mode: z.enum(["polling", "webhook"]).default("polling"),
  webhook: nullAsUnset(telegramWebhook),
  accounts: z.preprocess((v) => v ?? {}, z.record(accountId, telegramAccount)),
  ...accessSettingsShape,
  pollTimeoutSeconds: z.number().int().min(1).max(50).default(30),
})
  .refine((t) => !t.enabled || t.token !== undefined || Object.keys(t.accounts).length > 0, {
    message: "set channels.telegram.token (e.g. ${TELEGRAM_BOT_TOKEN}) or channels.telegram.accounts",
  })
  .refine(
    (t) =>
      (t.mode !== "webhook" && Object.values(t.accounts).every((a) => a.mode !== "webhook")) ||
      t.webhook !== undefined ||
      Object.values(t.accounts).every((a) => (a.mode ?? t.mode) !== "webhook" || a.webhook !== undefined),
    {
      message: "webhook mode needs webhook.url and webhook.secret",
    },
  );

/** `channels.telegram` as parsed. */
export type TelegramSettings = z.output<typeof telegramSettings>;

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
  problems.push(
    ...clashes(
      "channels.telegram",
      plans,
      "token (one bot can be polled by one account only)",
      (p) => p.token,
    ),
  );
  problems.push(...clashes("channels.telegram", plans, "webhook url", (p) => p.webhook?.url));
  problems.push(...clashes("channels.telegram", plans, "webhook path", (p) => p.webhook?.path));
  if (problems.length > 0) throw new ConfigError(undefined, problems);
  return plans;
}

/** `https://host/base?x` + `bot` → `https://host/base/bot?x`. */
function appendPath(url: string, segment: string): string {
  const u = new URL(url);
  u.pathname = `${u.pathname.replace(/\/+$/, "")}/${encodeURIComponent(segment)}`;
  return u.toString();
}
