/**
 * Telegram failures in one place: every error grammY throws (a Bot API error envelope, or a
 * transport failure) becomes a TelegramFailure with a stable kind, through one table. The
 * adapter branches on the kind, never on Telegram's description text.
 */
import type { GrammyError } from "grammy";
import { ChannelSendError } from "../errors.js";

/** What went wrong, as far as the adapter cares. Closed set. */
export type TelegramFailureKind =
  /** 401: the token was revoked or is wrong. Retrying cannot help. */
  | "unauthorized"
  /** 409: another process polls this bot, or a webhook is set while we poll. */
  | "conflict"
  /** 429: wait `retryAfterMs`. */
  | "rate_limit"
  /** 400 "message is not modified": the edit is already in place. */
  | "not_modified"
  /** 400 "can't parse entities": the same text may be sent without formatting. */
  | "bad_entities"
  /** 400 "message to edit not found": the message is gone (deleted by the user). */
  | "message_gone"
  /** Any other 400, and 404: the request itself is wrong (bad webhook URL, chat not found). */
  | "bad_request"
  /** 403: blocked by the user, kicked from the group. */
  | "forbidden"
  /** 5xx from Telegram. */
  | "server"
  /** No answer: network down, timeout, aborted. */
  | "network";

/** A classified Telegram failure. */
export interface TelegramFailure {
  kind: TelegramFailureKind;
  /** Telegram's error_code, when Telegram answered. */
  code: number | undefined;
  /** The Bot API method that failed, when known. */
  method: string | undefined;
  /** "409 Conflict: …" or the transport error's message; for logs and dead-letter reasons. */
  description: string;
  /** From `parameters.retry_after` on a 429. */
  retryAfterMs: number | undefined;
}

/** The error class of the grammY module the adapter loaded (it is imported lazily). */
export interface GrammyErrorClasses {
  GrammyError: typeof GrammyError;
}

interface Rule {
  code: (code: number) => boolean;
  /** Matched against Telegram's description; the one place its wording matters. */
  description?: RegExp;
  kind: TelegramFailureKind;
}

/** First match wins. */
const RULES: readonly Rule[] = [
  { code: (c) => c === 401, kind: "unauthorized" },
  { code: (c) => c === 409, kind: "conflict" },
  { code: (c) => c === 429, kind: "rate_limit" },
  { code: (c) => c === 400, description: /message is not modified/i, kind: "not_modified" },
  { code: (c) => c === 400, description: /can't parse entities/i, kind: "bad_entities" },
  { code: (c) => c === 400, description: /message to edit not found/i, kind: "message_gone" },
  { code: (c) => c === 403, kind: "forbidden" },
  { code: (c) => c >= 500, kind: "server" },
  { code: (c) => c >= 400 && c < 500, kind: "bad_request" },
];

/** Classifies anything a grammY call threw. */
export function toTelegramFailure(err: unknown, grammy: GrammyErrorClasses | undefined): TelegramFailure {
  if (grammy && err instanceof grammy.GrammyError) {
    const code = err.error_code;
    const rule = RULES.find((r) => r.code(code) && (!r.description || r.description.test(err.description)));
    const retryAfter = err.parameters.retry_after;
    return {
      kind: rule?.kind ?? "bad_request",
      code,
      method: err.method,
      description: `${code} ${err.description}`,
      retryAfterMs: code === 429 ? (retryAfter ?? 1) * 1000 : undefined,
    };
  }
  return {
    kind: "network",
    code: undefined,
    method: undefined,
    description: err instanceof Error ? err.message : String(err),
    retryAfterMs: undefined,
  };
}

/** A send failure for the outbox: 429 waits `retry_after`, 5xx and transport failures retry, the rest is permanent. */
export function toSendError(f: TelegramFailure, cause: unknown, chatId: string): ChannelSendError {
  switch (f.kind) {
    case "rate_limit":
      return new ChannelSendError("rate_limit", f.description, {
        cause,
        ...(f.retryAfterMs !== undefined ? { retryAfterMs: f.retryAfterMs } : {}),
      });
    case "server":
    case "network":
    case "conflict":
      return new ChannelSendError("transient", f.description, { cause });
    default:
      // 400 (chat not found, too long), 403 (blocked by the user, kicked), 401: retrying cannot help.
      return new ChannelSendError("permanent", `${f.description} (chat ${chatId})`, { cause });
  }
}

/**
 * A start-up failure that retrying cannot fix (a rejected token, a webhook Telegram refuses), as
 * an error naming the setting to check; undefined for anything worth retrying.
 */
export function configProblem(f: TelegramFailure, accountId: string, cause: unknown): Error | undefined {
  const who = `telegram account ${accountId}`;
  if (f.kind === "unauthorized" || (f.method === "getMe" && f.code === 404)) {
    return new Error(`${who}: the bot token was rejected (${f.description}); check channels.telegram.token`, {
      cause,
    });
  }
  if (f.method === "setWebhook" && f.kind === "bad_request") {
    return new Error(
      `${who}: Telegram refused the webhook (${f.description}); check channels.telegram.webhook: url must be a public HTTPS URL that reaches this gateway, secret 1-256 letters, digits, _ or -`,
      { cause },
    );
  }
  return undefined;
}
