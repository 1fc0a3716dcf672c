/**
 * Slack failures in one place: whatever the Web API client throws (a platform error envelope,
 * a 429, an HTTP error, a transport failure) becomes a SlackFailure with a stable kind through
 * one table, and from there a send error the outbox understands.
 */
import { ChannelSendError } from "../errors.js";

/** What went wrong, as far as the adapter cares. Closed set. */
export type SlackFailureKind =
  /** The token is wrong, revoked, or the app was uninstalled. Retrying cannot help. */
  | "auth"
  /** The app lacks an OAuth scope (`needed` names it). */
  | "missing_scope"
  /** 429: wait `retryAfterMs`. */
  | "rate_limit"
  /** The conversation is gone or closed to the bot: not found, not a member, archived. */
  | "gone"
  /** chat.update of a message that is not there (deleted by a person). */
  | "message_gone"
  /** Any other platform error: the request itself is wrong. */
  | "bad_request"
  /** 5xx, or Slack says it is having trouble. */
  | "server"
  /** No answer: network down, timeout, aborted. */
  | "network";

/** A classified Slack failure. */
export interface SlackFailure {
  kind: SlackFailureKind;
  /** Slack's error code (`channel_not_found`), or the HTTP status, or the transport's message. */
  code: string;
  /** For logs and dead-letter reasons. */
  description: string;
  /** From `Retry-After` on a 429. */
  retryAfterMs: number | undefined;
  /** On missing_scope: the scope Slack says is needed. */
  needed: string | undefined;
}

const KIND_BY_ERROR: Readonly<Record<string, SlackFailureKind>> = {
  invalid_auth: "auth",
  not_authed: "auth",
  account_inactive: "auth",
  token_revoked: "auth",
  token_expired: "auth",
  no_permission: "auth",
  org_login_required: "auth",
  ekm_access_denied: "auth",
  missing_scope: "missing_scope",
  ratelimited: "rate_limit",
  channel_not_found: "gone",
  not_in_channel: "gone",
  is_archived: "gone",
  user_not_found: "gone",
  restricted_action: "gone",
  message_not_found: "message_gone",
  cant_update_message: "message_gone",
  edit_window_closed: "message_gone",
  internal_error: "server",
  fatal_error: "server",
  service_unavailable: "server",
  request_timeout: "server",
};

interface WebApiErrorShape {
  code?: string;
  data?: { error?: string; needed?: string; provided?: string };
  retryAfter?: number;
  statusCode?: number;
  original?: unknown;
  message?: string;
}

/** Classifies anything a @slack/web-api call threw. */
export function toSlackFailure(err: unknown): SlackFailure {
  const e = (typeof err === "object" && err !== null ? err : {}) as WebApiErrorShape;
  const base = { retryAfterMs: undefined, needed: undefined };
  switch (e.code) {
    case "slack_webapi_platform_error": {
      const code = e.data?.error ?? "unknown_error";
      const needed = e.data?.needed;
      return {
        ...base,
        kind: KIND_BY_ERROR[code] ?? "bad_request",
        code,
        description: needed ? `${code} (needs scope ${needed})` : code,
        needed,
      };
    }
    case "slack_webapi_rate_limited_error": {
      const seconds = typeof e.retryAfter === "number" && e.retryAfter >= 0 ? e.retryAfter : 1;
      return {
        ...base,
        kind: "rate_limit",
        code: "ratelimited",
        description: `429 rate limited (Retry-After ${seconds} s)`,
        retryAfterMs: seconds * 1000,
      };
    }
    case "slack_webapi_http_error": {
      const status = e.statusCode ?? 0;
      return {
        ...base,
        kind: status >= 500 ? "server" : status === 401 || status === 403 ? "auth" : "bad_request",
        code: String(status),
        description: `HTTP ${status}`,
      };
    }
    default: {
      const cause = e.original instanceof Error ? e.original.message : undefined;
      const message = cause ?? (err instanceof Error ? err.message : String(err));
      return { ...base, kind: "network", code: "network", description: message };
    }
  }
}

/**
 * A send failure for the outbox: a rate limit waits its Retry-After, 5xx and transport failures
 * retry, and the rest — a conversation that is gone, a revoked token, a missing scope, a bad
 * request — is permanent, with the conversation named.
 */
export function toSendError(f: SlackFailure, cause: unknown, channel: string): ChannelSendError {
  switch (f.kind) {
    case "rate_limit":
      return new ChannelSendError("rate_limit", f.description, {
        cause,
        ...(f.retryAfterMs !== undefined ? { retryAfterMs: f.retryAfterMs } : {}),
      });
    case "server":
    case "network":
      return new ChannelSendError("transient", f.description, { cause });
    default:
      return new ChannelSendError("permanent", `${f.description} (channel ${channel})`, { cause });
  }
}
