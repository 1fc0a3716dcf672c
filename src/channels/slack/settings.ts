/**
 * Slack's settings: the `channels.slack` schema (built from the shared access fragment, with
 * Slack's word `channels` for the allowlist of channel ids), and its apps resolved into plans:
 * Socket Mode (default; an app-level token, no inbound port) or HTTP (the Events API on the
 * gateway's own server, verified with the signing secret).
 */
import { z } from "zod";
import { ConfigError } from "../../util/config-error.js";
import { idList, section } from "../../util/zod-sections.js";
import { accessSettingsShape } from "../access-policy.js";
import { accountId, clashes } from "../accounts.js";

const botToken = z.string().startsWith("xoxb-", { message: "expected a bot token (xoxb-…)" });
const appToken = z.string().startsWith("xapp-", { message: "expected an app-level token (xapp-…)" });
const slashCommand = z
  .string()
  .regex(/^\/[a-z0-9_-]{1,31}$/, { message: "expected a slash command such as /switchyard" });
const mode = z.enum(["socket", "http"]);

/** Slack's Web API root: the default of `apiUrl`. */
export const SLACK_API_URL = "https://slack.com/api/";

const slackAccount = z.strictObject({
  botToken,
  appToken: appToken.optional(),
  mode: mode.optional(),
  signingSecret: z.string().min(1).optional(),
  apiUrl: z.url().optional(),
  /** HTTP mode: path of the Events API endpoint on the gateway server (default /slack/<account>/events). */
  path: z.string().startsWith("/").optional(),
  slashCommand: slashCommand.optional(),
});

const { groups: _groups, ...sharedAccess } = accessSettingsShape;

/** `channels.slack`: one or more Slack apps plus the access policy they share. */
export const slackSettings = section({
  enabled: z.boolean().default(true),
  /** Bot token (xoxb-…), usually ${SLACK_BOT_TOKEN}: shorthand for accounts.default.botToken. */
  botToken: botToken.optional(),
  /** App-level token (xapp-…) with connections:write, for Socket Mode. */
  appToken: appToken.optional(),
  /** socket: Socket Mode (default, no inbound port); http: the Events API on the gateway's server. */
  mode: mode.default("socket"),
  /** HTTP mode: verifies X-Slack-Signature on every request. */
  signingSecret: z.string().min(1).optional(),
  /** Web API root; tests point it at a fake. */
  apiUrl: z.url().default(SLACK_API_URL),
  /** HTTP mode, one app: path of its Events API endpoint (default /slack/events). */
  path: z.string().startsWith("/").optional(),
  /** The slash command mapped to the chat commands (`/switchyard new|stop|status|help`). */
  slashCommand: slashCommand.default("/switchyard"),
  accounts: z.preprocess((v) => v ?? {}, z.record(accountId, slackAccount)),
  ...sharedAccess,
  /** Channel ids (C…, G…) allowed under groupPolicy allowlist. */
  channels: idList,
  /**
   * While a run works: `auto` shows the assistant thread status where the app has Slack's
   * assistant feature and a reaction on the message otherwise; `reaction` always reacts; `off`.
   */
  workingStatus: z.enum(["auto", "reaction", "off"]).default("auto"),
  /** Emoji name (without colons) of the working reaction. */
  workingReaction: z
    .string()
    .regex(/^[a-z0-9_+-]+$/, { message: "expected an emoji name such as hourglass_flowing_sand" })
    .default("hourglass_flowing_sand"),
  /** Socket Mode: how long to wait for a pong before reconnecting, and the reconnect step (ms). */
  socketPingTimeoutMs: z.number().int().min(100).max(60_000).default(5_000),
  /** Longest text one message carries; longer replies are split (Slack truncates past 40,000). */
  maxMessageChars: z.number().int().min(500).max(39_000).default(4_000),
}).refine((s) => !s.enabled || s.botToken !== undefined || Object.keys(s.accounts).length > 0, {
  message: "set channels.slack.botToken (e.g. ${SLACK_BOT_TOKEN}) or channels.slack.accounts",
});

/** `channels.slack` as parsed. */
export type SlackSettings = z.output<typeof slackSettings>;

/** One Slack app (a workspace install), with its settings resolved. */
export interface SlackAccountPlan {
  accountId: string;
  botToken: string;
  mode: "socket" | "http";
  /** Socket Mode. */
  appToken?: string;
  /** HTTP mode: the signing secret and the gateway path serving the Events API. */
  http?: { signingSecret: string; path: string };
  /** Web API root, ending in "/". */
  apiUrl: string;
  slashCommand: string;
}

/**
 * Resolves every configured Slack app (`botToken` is the account "default"). Throws ConfigError
 * naming the key when a Socket Mode app has no app token, an HTTP app no signing secret, or two
 * apps share a bot token or an HTTP path.
 */
export function planSlackAccounts(settings: SlackSettings): SlackAccountPlan[] {
  const entries = Object.entries({
    ...(settings.botToken
      ? {
          default: {
            botToken: settings.botToken,
            ...(settings.appToken ? { appToken: settings.appToken } : {}),
            ...(settings.signingSecret ? { signingSecret: settings.signingSecret } : {}),
            ...(settings.path ? { path: settings.path } : {}),
          },
        }
      : {}),
    ...settings.accounts,
  }) as Array<[string, z.output<typeof slackAccount>]>;
  const several = entries.length > 1;
  const problems: string[] = [];
  const plans = entries.map(([id, a]): SlackAccountPlan => {
    const key = id in settings.accounts ? `channels.slack.accounts.${id}` : "channels.slack";
    const plan: SlackAccountPlan = {
      accountId: id,
      botToken: a.botToken,
      mode: a.mode ?? settings.mode,
      apiUrl: withSlash(a.apiUrl ?? settings.apiUrl),
      slashCommand: a.slashCommand ?? settings.slashCommand,
    };
    if (plan.mode === "socket") {
      const token = a.appToken ?? (several ? undefined : settings.appToken);
      if (token) plan.appToken = token;
      else
        problems.push(
          `${key}.appToken is missing: Socket Mode needs an app-level token (xapp-…, scope connections:write; Slack app settings → Basic Information → App-Level Tokens), or set mode: http`,
        );
    } else {
      const secret = a.signingSecret ?? settings.signingSecret;
      if (secret) {
        plan.http = {
          signingSecret: secret,
          path: a.path ?? (several ? `/slack/${id}/events` : (settings.path ?? "/slack/events")),
        };
      } else
        problems.push(
          `${key}.signingSecret is missing: HTTP mode verifies every request with it (Slack app settings → Basic Information → Signing Secret)`,
        );
    }
    return plan;
  });
  problems.push(
    ...clashes(
      "channels.slack",
      plans,
      "botToken (one Slack app can be run by one account only)",
      (p) => p.botToken,
    ),
  );
  problems.push(...clashes("channels.slack", plans, "HTTP path", (p) => p.http?.path));
  if (problems.length > 0) throw new ConfigError(undefined, problems);
  return plans;
}

function withSlash(url: string): string {
  return url.endsWith("/") ? url : `${url}/`;
}
