/** Slack's failures, classified once: what the outbox retries, waits for, or gives up on. */
import { describe, expect, it } from "vitest";
import { toSendError, toSlackFailure } from "../../../src/channels/slack/errors.js";

const platform = (error: string, extra: Record<string, unknown> = {}) => ({
  code: "slack_webapi_platform_error",
  data: { ok: false, error, ...extra },
});

describe("Slack failures", () => {
  it.each([
    ["channel_not_found", "gone", "permanent"],
    ["not_in_channel", "gone", "permanent"],
    ["is_archived", "gone", "permanent"],
    ["invalid_auth", "auth", "permanent"],
    ["token_revoked", "auth", "permanent"],
    ["msg_too_long", "bad_request", "permanent"],
    ["internal_error", "server", "transient"],
  ])("%s is %s, so a send is %s", (error, kind, sendKind) => {
    const f = toSlackFailure(platform(error));
    expect(f.kind).toBe(kind);
    expect(toSendError(f, undefined, "C1")).toMatchObject({ kind: sendKind });
  });

  it("a 429 waits its Retry-After; a 5xx and a dropped connection retry", () => {
    const limited = toSlackFailure({ code: "slack_webapi_rate_limited_error", retryAfter: 7 });
    expect(limited).toMatchObject({ kind: "rate_limit", retryAfterMs: 7_000 });
    expect(toSendError(limited, undefined, "C1")).toMatchObject({ kind: "rate_limit", retryAfterMs: 7_000 });
    expect(toSlackFailure({ code: "slack_webapi_http_error", statusCode: 503 }).kind).toBe("server");
    const dropped = toSlackFailure({
      code: "slack_webapi_request_error",
      original: new Error("socket hang up"),
    });
    expect(dropped).toMatchObject({ kind: "network", description: "socket hang up" });
  });

  it("names the scope Slack says is missing, and the channel in a permanent error", () => {
    const f = toSlackFailure(platform("missing_scope", { needed: "chat:write" }));
    expect(f).toMatchObject({
      kind: "missing_scope",
      needed: "chat:write",
      description: "missing_scope (needs scope chat:write)",
    });
    expect(toSendError(f, undefined, "C9").message).toBe(
      "missing_scope (needs scope chat:write) (channel C9)",
    );
  });
});
