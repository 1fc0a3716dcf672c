/** Discord failures classified by shape: what is retried, what is not, and what the text says. */
import { describe, expect, it } from "vitest";
import { toDiscordFailure, toSendError } from "../../../src/channels/discord/errors.js";
import { nonceOf, snowflakeAt } from "../../../src/channels/discord/discord-sender.js";

/** The shapes @discordjs/rest throws (classified by name and fields, so built by hand here). */
const apiError = (status: number, code: number, message: string) =>
  Object.assign(new Error(message), { name: `DiscordAPIError[${code}]`, status, code });

describe("toDiscordFailure / toSendError", () => {
  it("403 and 404 are permanent, each with what to fix", () => {
    const access = toSendError(apiError(403, 50001, "Missing Access"), "channel 3");
    expect(access.kind).toBe("permanent");
    expect(access.message).toMatch(
      /channel 3: Discord 403 \(code 50001\): Missing Access: give the bot View Channel/,
    );
    const gone = toSendError(apiError(404, 10003, "Unknown Channel"), "channel 3");
    expect(gone.retryable).toBe(false);
    expect(toDiscordFailure(apiError(404, 10008, "Unknown Message")).kind).toBe("message_gone");
    expect(toDiscordFailure(apiError(401, 0, "401: Unauthorized")).kind).toBe("auth");
    expect(toDiscordFailure(apiError(400, 50035, "Invalid Form Body")).kind).toBe("bad_request");
  });

  it("a declined rate-limit wait is retried after it; 5xx and transport failures are transient", () => {
    const limited = Object.assign(new Error(), {
      name: "RateLimitError[/channels/:id/messages]",
      retryAfter: 30_000,
    });
    const e = toSendError(limited, "channel 3");
    expect(e.kind).toBe("rate_limit");
    expect(e.retryAfterMs).toBe(30_000);
    const server = Object.assign(new Error("Bad Gateway"), { name: "HTTPError", status: 502 });
    expect(toSendError(server, "x").kind).toBe("transient");
    const refused = Object.assign(new Error("fetch failed"), { cause: { code: "ECONNREFUSED" } });
    expect(toDiscordFailure(refused)).toMatchObject({ kind: "network", code: "ECONNREFUSED" });
    expect(toSendError(refused, "x").kind).toBe("transient");
  });
});

describe("nonces and snowflakes", () => {
  it("an outbox key is its own nonce up to Discord's 25 characters, else a stable 25-character hash", () => {
    expect(nonceOf("outbox-12-mi1x6ka0")).toBe("outbox-12-mi1x6ka0");
    const long = "outbox-123456789012-mi1x6ka0";
    expect(nonceOf(long)).toHaveLength(25);
    expect(nonceOf(long)).toBe(nonceOf(long));
    expect(nonceOf(long)).not.toBe(nonceOf(`${long}1`));
  });

  it("a time becomes the smallest snowflake at that time", () => {
    expect(snowflakeAt(1_420_070_400_000)).toBe("0");
    expect(snowflakeAt(1_420_070_400_001)).toBe(String(1n << 22n));
    expect(snowflakeAt(0)).toBe("0");
  });
});
