/**
 * The Slack channel module: `channels.slack` settings, one SlackChannel per app with the access
 * policy they share, and doctor's checks (auth.test with the bot token and the scopes Slack
 * says it has; apps.connections.open with the app token in Socket Mode). The adapter is
 * imported only when the channel is configured, and Bolt when it starts.
 */
import { networkReason } from "../../util/network-reason.js";
import { ChannelAccessPolicy } from "../access-policy.js";
import { previewLedger } from "../preview-ledger.js";
import type { ChannelCheck, ChannelModule } from "../types.js";
import { type SlackAccountPlan, planSlackAccounts, slackSettings } from "./settings.js";

const settings = slackSettings.optional();

/** The scopes the app manifest in the README grants; doctor names any that are missing. */
export const SLACK_SCOPES = [
  "app_mentions:read",
  "channels:history",
  "channels:read",
  "chat:write",
  "commands",
  "files:read",
  "groups:history",
  "groups:read",
  "im:history",
  "im:read",
  "mpim:history",
  "mpim:read",
  "reactions:write",
  "users:read",
] as const;

/** Slack: `channels.slack` (absent: off). */
export const slackModule: ChannelModule<typeof settings> = {
  settings,
  enabled: (settings) => settings?.enabled === true,
  accounts: (settings) => planSlackAccounts(settings).map((p) => p.accountId),
  async create(settings, ctx) {
    const { SlackChannel } = await import("./slack-channel.js");
    const channels = planSlackAccounts(settings).map(
      (plan) =>
        new SlackChannel({
          ...plan,
          server: ctx.server,
          mentionPatterns: settings.mentionPatterns,
          streaming: settings.streaming,
          workingStatus: settings.workingStatus,
          workingReaction: settings.workingReaction,
          maxMessageChars: settings.maxMessageChars,
          mediaMaxBytes: Math.round(settings.mediaMaxMb * 1_048_576),
          workspaceDir: ctx.workspaceDir,
          commands: ctx.commands,
          clientPingTimeoutMs: settings.socketPingTimeoutMs,
          ...(ctx.previews
            ? { previewLedger: previewLedger(ctx.previews, "slack", plan.accountId, ctx.clock) }
            : {}),
          onReconnected: () => ctx.signals.reconnected("slack", plan.accountId),
          logger: ctx.logger.child({ name: "channel.slack", account: plan.accountId }),
          clock: ctx.clock,
        }),
    );
    const access = new ChannelAccessPolicy({
      channel: "slack",
      ...settings,
      groups: settings.channels,
      pairing: ctx.pairing,
      clock: ctx.clock,
      logger: ctx.logger.child({ name: "gateway.access", channel: "slack" }),
    });
    return { channels, access };
  },
  async probe(settings, { timeoutMs }) {
    const accounts = planSlackAccounts(settings);
    const checks = await Promise.all(accounts.map((a) => probeAccount(a, timeoutMs)));
    return checks.flat();
  },
};

interface SlackAnswer {
  ok?: boolean;
  error?: string;
  team?: string;
  user?: string;
  url?: string;
}

/** One Web API call with a bearer token, bounded by `timeoutMs`. */
async function call(
  apiUrl: string,
  method: string,
  token: string,
  timeoutMs: number,
): Promise<{ body: SlackAnswer | undefined; scopes: string | null; status: number }> {
  const res = await fetch(`${apiUrl}${method}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/x-www-form-urlencoded" },
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await res.json().catch(() => undefined)) as SlackAnswer | undefined;
  return { body, scopes: res.headers.get("x-oauth-scopes"), status: res.status };
}

/** auth.test (token rejected vs unreachable vs scopes missing), then the app token in Socket Mode. */
async function probeAccount(account: SlackAccountPlan, timeoutMs: number): Promise<ChannelCheck[]> {
  const what = `slack:${account.accountId}`;
  const key =
    account.accountId === "default" ? "channels.slack" : `channels.slack.accounts.${account.accountId}`;
  const root = account.apiUrl;
  let auth: Awaited<ReturnType<typeof call>>;
  try {
    auth = await call(root, "auth.test", account.botToken, timeoutMs);
  } catch (err) {
    return [
      {
        verdict: "fail",
        what,
        detail: `cannot reach Slack at ${root}: ${networkReason(err, timeoutMs)} (check the network, or apiUrl)`,
      },
    ];
  }
  if (auth.body?.ok !== true) {
    const error = auth.body?.error ?? `HTTP ${auth.status}`;
    return [
      {
        verdict: "fail",
        what,
        detail: `bot token rejected by Slack (${error}): check ${key}.botToken (Slack app settings → OAuth & Permissions → Bot User OAuth Token, xoxb-…)`,
      },
    ];
  }
  const checks: ChannelCheck[] = [];
  const granted = new Set((auth.scopes ?? "").split(",").map((s) => s.trim()));
  const missing = auth.scopes === null ? [] : SLACK_SCOPES.filter((s) => !granted.has(s));
  const who = `bot @${auth.body.user ?? "?"} in ${auth.body.team ?? "?"}`;
  checks.push(
    missing.length > 0
      ? {
          verdict: "warn",
          what,
          detail: `token accepted (${who}) but scopes are missing: ${missing.join(", ")} — add them under OAuth & Permissions (or paste the README's manifest) and reinstall the app`,
        }
      : {
          verdict: "ok",
          what,
          detail: `token accepted: ${who}, receiving by ${account.mode === "socket" ? "Socket Mode" : `the Events API at ${account.http?.path}`}`,
        },
  );
  if (account.mode === "socket" && account.appToken) {
    try {
      const open = await call(root, "apps.connections.open", account.appToken, timeoutMs);
      if (open.body?.ok !== true)
        checks.push({
          verdict: "fail",
          what: `${what} socket mode`,
          detail: `app token rejected (${open.body?.error ?? `HTTP ${open.status}`}): check ${key}.appToken (an app-level token with connections:write, and Socket Mode turned on)`,
        });
      else checks.push({ verdict: "ok", what: `${what} socket mode`, detail: "app token accepted" });
    } catch (err) {
      checks.push({
        verdict: "fail",
        what: `${what} socket mode`,
        detail: `cannot reach Slack at ${root}: ${networkReason(err, timeoutMs)}`,
      });
    }
  }
  return checks;
}
