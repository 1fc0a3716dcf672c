/**
 * A gateway SIGKILLed after it fetched a Telegram update but before it answered answers that
 * update exactly once after restart (offset confirmed only after commit; inbox dedupe).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { FakeTelegramBotApi } from "../fakes/telegram-bot-api.js";
import { spawnGateway } from "../helpers/gateway-process.js";

const TOKEN = "654321:AAcrash-test-token-for-the-fake-api-00";

describe("Telegram crash recovery (SIGKILL)", () => {
  let sim: ModelSimulator;
  let tg: FakeTelegramBotApi;
  let home: string;
  let configPath: string;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    tg = new FakeTelegramBotApi();
    await tg.start();
    tg.addBot({ token: TOKEN, id: 654321, username: "crash_bot" });
    home = mkdtempSync(join(tmpdir(), "sy-tg-crash-"));
    configPath = join(home, "switchyard.yaml");
    writeFileSync(
      configPath,
      [
        "agent:",
        "  model: anthropic/claude-test",
        "providers:",
        "  anthropic:",
        "    apiKey: sk-ant-test-key",
        `    baseUrl: ${sim.url}`,
        "channels:",
        "  telegram:",
        `    token: "${TOKEN}"`,
        `    apiRoot: ${tg.apiRoot}`,
        "    allowFrom: [42]",
        "logging:",
        "  level: warn",
      ].join("\n"),
    );
  });
  afterAll(async () => {
    await tg.close();
    await sim.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("answers an update fetched before the kill exactly once after restart", async () => {
    let gw = await spawnGateway(["--home", home, "--config", configPath, "--port", "0"]);
    await tg.waitFor("getUpdates", undefined, 10_000);
    sim.script({ hang: true }); // the run starts, then the process dies mid-call
    tg.pushMessage(TOKEN, {
      chat: { id: 42, type: "private" },
      from: { id: 42, first_name: "Ann" },
      text: "survive this",
    });
    await sim.waitForRequests(1, 10_000);
    await gw.kill("SIGKILL");
    expect(tg.sentMessages({ chatId: 42 })).toHaveLength(0);

    sim.script({ text: "I survived." });
    gw = await spawnGateway(["--home", home, "--config", configPath, "--port", "0"]);
    const t0 = Date.now();
    while (tg.sentMessages({ chatId: 42 }).length === 0 && Date.now() - t0 < 15_000) {
      await new Promise((r) => setTimeout(r, 20));
    }
    // Give a duplicate every chance to appear before checking there is none.
    await new Promise((r) => setTimeout(r, 500));
    expect(tg.sentMessages({ chatId: 42 }).map((m) => m.text)).toEqual(["I survived."]);
    expect(tg.pendingUpdates(TOKEN)).toBe(0);
    await gw.kill("SIGTERM");
  }, 60_000);
});
