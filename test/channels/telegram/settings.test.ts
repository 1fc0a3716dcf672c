/**
 * How the Telegram config section becomes bot accounts: the `token` shorthand, webhook URLs and
 * gateway paths per account (a shared webhook gets one URL and one route per bot), and the
 * configuration errors for settings two accounts cannot share.
 */
import { ConfigError } from "../../../src/util/config-error.js";
import { describe, expect, it } from "vitest";
import { type TelegramSettings, planTelegramAccounts } from "../../../src/channels/telegram/settings.js";
import { parseConfig } from "../../../src/config/load.js";

function telegram(section: Record<string, unknown>): TelegramSettings {
  const settings = parseConfig({ channels: { telegram: section } }, undefined).channels.telegram;
  if (!settings) throw new Error("no telegram section");
  return settings;
}

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

const SECRET = "s3cret";

describe("planTelegramAccounts", () => {
  it("turns the token shorthand into the account default, polling, apiRoot without trailing slash", () => {
    expect(planTelegramAccounts(telegram({ token: "1:A", apiRoot: "http://127.0.0.1:9/" }))).toEqual([
      { accountId: "default", token: "1:A", apiRoot: "http://127.0.0.1:9", mode: "polling" },
    ]);
  });

  it("uses a webhook shared by one account as given", () => {
    const [plan] = planTelegramAccounts(
      telegram({
        token: "1:A",
        mode: "webhook",
        webhook: { url: "https://bots.example.com/hook", secret: SECRET },
      }),
    );
    expect(plan?.webhook).toEqual({
      url: "https://bots.example.com/hook",
      secret: SECRET,
      path: "/telegram/default",
    });
  });

  it("gives each account sharing the top-level webhook its own URL and route", () => {
    const plans = planTelegramAccounts(
      telegram({
        mode: "webhook",
        webhook: { url: "https://bots.example.com/telegram/?v=1", secret: SECRET },
        accounts: { alpha: { token: "1:A" }, beta: { token: "2:B" } },
      }),
    );
    expect(plans.map((p) => p.webhook)).toEqual([
      { url: "https://bots.example.com/telegram/alpha?v=1", secret: SECRET, path: "/telegram/alpha" },
      { url: "https://bots.example.com/telegram/beta?v=1", secret: SECRET, path: "/telegram/beta" },
    ]);
  });

  it("uses an account's own webhook settings as given, next to polling accounts", () => {
    const plans = planTelegramAccounts(
      telegram({
        token: "1:A",
        accounts: {
          hooked: {
            token: "2:B",
            mode: "webhook",
            webhook: { url: "https://a.example.com/x", secret: SECRET, path: "/in/x" },
          },
        },
      }),
    );
    expect(plans.map((p) => [p.accountId, p.mode, p.webhook?.url, p.webhook?.path])).toEqual([
      ["default", "polling", undefined, undefined],
      ["hooked", "webhook", "https://a.example.com/x", "/in/x"],
    ]);
  });

  it("refuses a webhook path shared by several accounts, naming them and the fix", () => {
    const err = configError(() =>
      planTelegramAccounts(
        telegram({
          mode: "webhook",
          webhook: { url: "https://bots.example.com/t", secret: SECRET, path: "/hook" },
          accounts: { alpha: { token: "1:A" }, beta: { token: "2:B" } },
        }),
      ),
    );
    expect(err.issues[0]).toMatch(
      /webhook\.path is set, but 2 accounts \(alpha, beta\) share channels\.telegram\.webhook/,
    );
    expect(err.issues[0]).toContain("remove webhook.path");
  });

  it("refuses two accounts with one token, one URL or one path", () => {
    expect(
      configError(() =>
        planTelegramAccounts(telegram({ token: "1:A", accounts: { copy: { token: "1:A" } } })),
      ).issues,
    ).toEqual([expect.stringMatching(/accounts default and copy have the same token/)]);
    const hook = { url: "https://a.example.com/same", secret: SECRET, path: "/same" };
    const err = configError(() =>
      planTelegramAccounts(
        telegram({
          accounts: {
            a: { token: "1:A", mode: "webhook", webhook: hook },
            b: { token: "2:B", mode: "webhook", webhook: hook },
          },
        }),
      ),
    );
    expect(err.issues).toEqual([
      expect.stringMatching(/accounts a and b have the same webhook url/),
      expect.stringMatching(/accounts a and b have the same webhook path/),
    ]);
  });
});
