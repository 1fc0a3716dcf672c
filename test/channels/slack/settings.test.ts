/** `channels.slack`: defaults, apps planned per mode, and every bad combination named. */
import { describe, expect, it } from "vitest";
import { SLACK_API_URL, planSlackAccounts, slackSettings } from "../../../src/channels/slack/settings.js";
import { ConfigError } from "../../../src/util/config-error.js";

const parse = (v: unknown) => slackSettings.parse(v);
const problems = (v: unknown): string[] => {
  try {
    planSlackAccounts(parse(v));
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
};

describe("channels.slack", () => {
  it("one app in Socket Mode by default, with the shared access defaults and Slack's `channels` allowlist", () => {
    const s = parse({ botToken: "xoxb-1", appToken: "xapp-1", channels: ["C1", 42] });
    expect(s).toMatchObject({
      mode: "socket",
      dmPolicy: "pairing",
      groupPolicy: "allowlist",
      requireMention: true,
      channels: ["C1", "42"],
      slashCommand: "/switchyard",
      apiUrl: SLACK_API_URL,
      maxMessageChars: 4000,
      workingStatus: "auto",
    });
    expect(planSlackAccounts(s)).toEqual([
      {
        accountId: "default",
        botToken: "xoxb-1",
        appToken: "xapp-1",
        mode: "socket",
        apiUrl: SLACK_API_URL,
        slashCommand: "/switchyard",
      },
    ]);
  });

  it("HTTP mode serves /slack/events for one app and /slack/<id>/events for several", () => {
    const one = planSlackAccounts(
      parse({ botToken: "xoxb-1", mode: "http", signingSecret: "s", apiUrl: "http://127.0.0.1:1/api" }),
    );
    expect(one[0]).toMatchObject({
      http: { signingSecret: "s", path: "/slack/events" },
      apiUrl: "http://127.0.0.1:1/api/",
    });
    const two = planSlackAccounts(
      parse({
        mode: "http",
        signingSecret: "s",
        accounts: { work: { botToken: "xoxb-w" }, home: { botToken: "xoxb-h", signingSecret: "h" } },
      }),
    );
    expect(two.map((p) => [p.accountId, p.http?.path, p.http?.signingSecret])).toEqual([
      ["work", "/slack/work/events", "s"],
      ["home", "/slack/home/events", "h"],
    ]);
  });

  it("names what is missing or clashing", () => {
    expect(() => parse({})).toThrow(/set channels.slack.botToken/);
    expect(() => parse({ botToken: "xapp-wrong" })).toThrow(/expected a bot token \(xoxb-…\)/);
    expect(() => parse({ botToken: "xoxb-1", groups: ["C1"] })).toThrow(/groups/);
    expect(problems({ botToken: "xoxb-1" })).toEqual([
      expect.stringMatching(/^channels.slack.appToken is missing: Socket Mode needs/),
    ]);
    expect(problems({ botToken: "xoxb-1", mode: "http" })).toEqual([
      expect.stringMatching(/^channels.slack.signingSecret is missing/),
    ]);
    expect(
      problems({
        appToken: "xapp-shared",
        accounts: {
          a: { botToken: "xoxb-same", appToken: "xapp-a" },
          b: { botToken: "xoxb-same", appToken: "xapp-b" },
        },
      }),
    ).toEqual([
      "channels.slack accounts a and b have the same botToken (one Slack app can be run by one account only)",
    ]);
    expect(
      problems({ accounts: { a: { botToken: "xoxb-a" } }, botToken: "xoxb-d", appToken: "xapp-d" }),
    ).toEqual([expect.stringMatching(/^channels.slack.accounts.a.appToken is missing/)]);
  });
});
