/** doctor's Discord checks against the fake: the token, the Message Content intent, reachability; the README's invite URL. */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { DISCORD_PERMISSIONS, discordModule } from "../../../src/channels/discord/module.js";
import { FakeDiscord } from "../../fakes/discord-api.js";

const TOKEN = "fake-discord-token-for-doctor";
let fake: FakeDiscord | undefined;

afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function probe(options: { token?: string; messageContentIntent?: boolean; apiUrl?: string } = {}) {
  await fake?.close();
  fake = new FakeDiscord({ token: TOKEN, messageContentIntent: options.messageContentIntent ?? true });
  await fake.start();
  const settings = discordModule.settings.parse({
    token: options.token ?? TOKEN,
    apiUrl: options.apiUrl ?? fake.apiUrl,
  });
  if (!settings) throw new Error("settings expected");
  return discordModule.probe?.(settings, { timeoutMs: 2_000, baseUrl: "http://127.0.0.1:1" });
}

describe("discord doctor checks", () => {
  it("accepts the token and the Message Content intent", async () => {
    expect(await probe()).toEqual([
      {
        verdict: "ok",
        what: "discord:default",
        detail: expect.stringMatching(/^token accepted: bot switchyard \(\d+\)$/),
      },
      { verdict: "ok", what: "discord:default intents", detail: "Message Content intent enabled" },
    ]);
  });

  it("names the missing Message Content intent and where to turn it on", async () => {
    const checks = await probe({ messageContentIntent: false });
    expect(checks?.[1]).toMatchObject({
      verdict: "fail",
      detail: expect.stringMatching(/Privileged Gateway Intents → MESSAGE CONTENT INTENT .*4014/),
    });
  });

  it("says a rejected token is rejected, and an unreachable Discord is unreachable", async () => {
    expect(await probe({ token: "a-wrong-token-of-enough-length" })).toEqual([
      {
        verdict: "fail",
        what: "discord:default",
        detail: expect.stringMatching(
          /bot token rejected by Discord \(401\): check channels\.discord\.token/,
        ),
      },
    ]);
    const unreachable = await probe({ apiUrl: "http://127.0.0.1:1/api" });
    expect(unreachable?.[0]).toMatchObject({
      verdict: "fail",
      detail: expect.stringMatching(/^cannot reach Discord at http:\/\/127\.0\.0\.1:1\/api/),
    });
  });

  it("the README's invite URL asks for exactly the permissions the channel needs", () => {
    const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");
    const url = /https:\/\/discord\.com\/oauth2\/authorize\?[^\s`]+/.exec(readme)?.[0] ?? "";
    const params = new URL(url.replace("<APPLICATION_ID>", "1")).searchParams;
    expect(params.get("permissions")).toBe(DISCORD_PERMISSIONS.toString());
    expect(params.get("scope")).toBe("bot applications.commands");
  });
});
