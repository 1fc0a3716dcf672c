/** doctor's Slack checks against the fake: accepted, rejected, scopes missing, unreachable. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SLACK_SCOPES, slackModule } from "../../../src/channels/slack/module.js";
import { FakeSlack } from "../../fakes/slack-api.js";

let fake: FakeSlack | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function probe(over: Record<string, unknown>, scopes?: string[]) {
  fake = new FakeSlack(scopes ? { scopes } : {});
  await fake.start();
  const settings = slackModule.settings.parse({
    botToken: fake.botToken,
    appToken: fake.appToken,
    apiUrl: fake.apiUrl,
    ...over,
  });
  if (!settings) throw new Error("no settings");
  return slackModule.probe?.(settings, { timeoutMs: 2_000, baseUrl: "http://127.0.0.1:1" });
}

describe("slack doctor probe", () => {
  it("accepts both tokens", async () => {
    expect(await probe({})).toEqual([
      expect.objectContaining({
        verdict: "ok",
        what: "slack:default",
        detail: expect.stringContaining("Socket Mode"),
      }),
      expect.objectContaining({ verdict: "ok", what: "slack:default socket mode" }),
    ]);
  });

  it("names a rejected bot token and app token by their keys", async () => {
    const checks = await probe({ botToken: "xoxb-wrong" });
    expect(checks?.[0]).toMatchObject({
      verdict: "fail",
      detail: expect.stringContaining("channels.slack.botToken"),
    });
    const app = await (async () => {
      await fake?.close();
      return probe({ appToken: "xapp-wrong" });
    })();
    expect(app?.[1]).toMatchObject({
      verdict: "fail",
      detail: expect.stringContaining("channels.slack.appToken"),
    });
  });

  it("says which scopes are missing", async () => {
    const checks = await probe({}, ["chat:write", "im:history"]);
    expect(checks?.[0]).toMatchObject({
      verdict: "warn",
      detail: expect.stringContaining("app_mentions:read"),
    });
  });

  it("says when Slack cannot be reached", async () => {
    const settings = slackModule.settings.parse({
      botToken: "xoxb-x",
      appToken: "xapp-x",
      apiUrl: "http://127.0.0.1:9/api/",
    });
    if (!settings) throw new Error("no settings");
    const checks = await slackModule.probe?.(settings, { timeoutMs: 1_000, baseUrl: "" });
    expect(checks?.[0]).toMatchObject({
      verdict: "fail",
      detail: expect.stringContaining("cannot reach Slack"),
    });
  });
});

describe("the README's app manifest", () => {
  const readme = readFileSync(join(import.meta.dirname, "../../../README.md"), "utf8");
  const json = /## Slack[\s\S]*?```json\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  const manifest = JSON.parse(json.replace(/^ {3}/gm, "")) as {
    oauth_config: { scopes: { bot: string[] } };
    settings: { event_subscriptions: { bot_events: string[] }; socket_mode_enabled: boolean };
    features: { slash_commands: Array<{ command: string }> };
  };

  it("grants exactly the scopes doctor checks, the events the adapter reads, and its slash command", () => {
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual([...SLACK_SCOPES].sort());
    expect(manifest.settings.event_subscriptions.bot_events).toEqual(
      expect.arrayContaining([
        "app_mention",
        "message.channels",
        "message.groups",
        "message.im",
        "message.mpim",
      ]),
    );
    expect(manifest.settings.socket_mode_enabled).toBe(true);
    expect(manifest.features.slash_commands.map((c) => c.command)).toEqual(["/switchyard"]);
  });
});
