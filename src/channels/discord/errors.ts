/**
 * Discord failures in one place: whatever @discordjs/rest throws (DiscordAPIError with Discord's
 * JSON error code, HTTPError for a 5xx after its retries, RateLimitError for a wait we declined
 * to sit out, an abort or a transport failure) becomes a DiscordFailure with a stable kind, and
 * from there a send error the outbox understands: a 403 or 404 is never retried, and its
 * description says what to fix. Classified by shape, so discord.js need not be loaded.
 */
import { ChannelSendError } from "../errors.js";

/** What went wrong, as far as the adapter cares. Closed set. */
export type DiscordFailureKind =
  /** 401: the token is wrong or was reset. */
  | "auth"
  /** 403: the bot may not see or post in the channel, or the person does not take DMs from it. */
  | "forbidden"
  /** 404 Unknown Channel: the channel or thread is gone, or the bot left the server. */
  | "gone"
  /** 404 Unknown Message: an edit of a message that was deleted. */
  | "message_gone"
  /** A 429 longer than the adapter waits in the library: retry after `retryAfterMs`. */
  | "rate_limit"
  /** Any other 4xx: the request itself is wrong (e.g. 50035 Invalid Form Body). */
  | "bad_request"
  /** 5xx after the library's own retries. */
  | "server"
  /** No answer: network down, timeout, aborted. */
  | "network";

/** A classified Discord failure. */
export interface DiscordFailure {
  kind: DiscordFailureKind;
  /** Discord's JSON error code (10003), else the HTTP status, else the transport's code. */
  code: string;
  /** For logs and dead-letter reasons. */
  description: string;
  retryAfterMs: number | undefined;
}

/** Discord JSON error codes and what they mean for a bot that posts. */
const KNOWN: Readonly<Record<number, { kind: DiscordFailureKind; fix: string }>> = {
  10003: { kind: "gone", fix: "the channel or thread was deleted, or the bot left the server" },
  10008: { kind: "message_gone", fix: "the message was deleted" },
  50001: {
    kind: "forbidden",
    fix: "Missing Access: give the bot View Channel and Send Messages in that channel",
  },
  50013: {
    kind: "forbidden",
    fix: "Missing Permissions: give the bot Send Messages (and Send Messages in Threads, Read Message History)",
  },
  50007: { kind: "forbidden", fix: "the person does not accept direct messages from the bot" },
  50083: { kind: "forbidden", fix: "the thread is archived" },
};

interface ErrorShape {
  name?: unknown;
  message?: unknown;
  status?: unknown;
  code?: unknown;
  retryAfter?: unknown;
  cause?: unknown;
}

/** Classifies anything a REST call threw. */
export function toDiscordFailure(err: unknown): DiscordFailure {
  const e = (typeof err === "object" && err !== null ? err : {}) as ErrorShape;
  const name = typeof e.name === "string" ? e.name : "";
  const message = typeof e.message === "string" ? e.message : String(err);
  if (name.startsWith("RateLimitError")) {
    const retryAfterMs = typeof e.retryAfter === "number" ? e.retryAfter : 1_000;
    return {
      kind: "rate_limit",
      code: "429",
      description: `rate limited by Discord for ${Math.ceil(retryAfterMs / 1000)} s`,
      retryAfterMs,
    };
  }
  if (name.startsWith("DiscordAPIError") && typeof e.status === "number") {
    const code = typeof e.code === "number" ? e.code : Number(e.code);
    const known = KNOWN[code];
    const kind: DiscordFailureKind =
      known?.kind ??
      (e.status === 401
        ? "auth"
        : e.status === 403
          ? "forbidden"
          : e.status === 404
            ? "gone"
            : e.status === 429
              ? "rate_limit"
              : "bad_request");
    const why = known?.fix ?? (kind === "auth" ? "the bot token was rejected (reset or revoked?)" : message);
    return {
      kind,
      code: Number.isFinite(code) && code !== 0 ? String(code) : String(e.status),
      description: `Discord ${e.status}${Number.isFinite(code) && code !== 0 ? ` (code ${code})` : ""}: ${why}`,
      retryAfterMs: undefined,
    };
  }
  if (name === "HTTPError" && typeof e.status === "number")
    return {
      kind: e.status >= 500 ? "server" : "bad_request",
      code: String(e.status),
      description: `Discord answered HTTP ${e.status} (${message})`,
      retryAfterMs: undefined,
    };
  const transport = transportCode(e);
  return {
    kind: "network",
    code: transport,
    description: `no answer from Discord (${transport}: ${message})`,
    retryAfterMs: undefined,
  };
}

function transportCode(e: ErrorShape): string {
  if (typeof e.code === "string") return e.code;
  const cause = e.cause as ErrorShape | undefined;
  if (cause && typeof cause.code === "string") return cause.code;
  return typeof e.name === "string" && e.name.length > 0 ? e.name : "Error";
}

/** The outbox's view: 403, 404, 401 and malformed requests are permanent; the rest retried. */
export function toSendError(err: unknown, what: string): ChannelSendError {
  const f = toDiscordFailure(err);
  const text = `${what}: ${f.description}`;
  switch (f.kind) {
    case "rate_limit":
      return new ChannelSendError("rate_limit", text, {
        cause: err,
        ...(f.retryAfterMs !== undefined ? { retryAfterMs: f.retryAfterMs } : {}),
      });
    case "server":
    case "network":
      return new ChannelSendError("transient", text, { cause: err });
    default:
      return new ChannelSendError("permanent", text, { cause: err });
  }
}
