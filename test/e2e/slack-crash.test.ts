/**
 * A Slack gateway SIGKILLed at the two worst moments answers exactly once after restart:
 * mid-run (the event was committed and acked; recovery redoes the run), and right after Slack
 * stored its reply but before the gateway recorded it (the row is in doubt after restart: it is
 * found in the conversation by its metadata and recorded, not posted again).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { FakeSlack } from "../fakes/slack-api.js";
import { spawnGateway } from "../helpers/gateway-process.js";
import { until } from "../helpers/until.js";

describe("Slack crash recovery (SIGKILL)", () => {
  let sim: ModelSimulator;
  let fake: FakeSlack;
  const homes: string[] = [];
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    fake = new FakeSlack();
    await fake.start();
    fake.addUser({ id: "UANN", name: "ann" });
    fake.addChannel({ id: "D1", name: "", kind: "im", user: "UANN" });
    fake.addChannel({ id: "D2", name: "", kind: "im", user: "UANN" });
  });
  afterAll(async () => {
    await fake.close();
    await sim.close();
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  });

  function newHome(): { home: string; config: string } {
    const home = mkdtempSync(join(tmpdir(), "sy-slack-crash-"));
    homes.push(home);
    const config = join(home, "switchyard.yaml");
    writeFileSync(
      config,
      [
        "agent:",
        "  model: anthropic/claude-test",
        "gateway:",
        "  leaseTtlMs: 1000",
        "providers:",
        "  anthropic:",
        "    apiKey: sk-ant-test-key",
        `    baseUrl: ${sim.url}`,
        "channels:",
        "  slack:",
        `    botToken: ${fake.botToken}`,
        `    appToken: ${fake.appToken}`,
        `    apiUrl: ${fake.apiUrl}`,
        "    allowFrom: [UANN]",
        "    socketPingTimeoutMs: 200",
        "logging:",
        "  level: warn",
      ].join("\n"),
    );
    return { home, config };
  }

  async function counts(home: string) {
    const store = openSqliteStore({ path: join(home, "switchyard.db") });
    try {
      return { inbox: await store.inbox.countByState(), outbox: await store.outbox.countByState() };
    } finally {
      await store.close();
    }
  }

  it("killed mid-run: answers exactly once after restart", async () => {
    const { home, config } = newHome();
    let gw = await spawnGateway(["--home", home, "--config", config, "--port", "0"]);
    sim.script({ hang: true });
    const sent = await fake.userMessage({ channel: "D1", user: "UANN", text: "survive this" });
    await fake.waitForAck(sent.envelopeId, 10_000); // acked only once committed
    await sim.waitForRequests(1, 10_000);
    await gw.kill("SIGKILL");
    expect(fake.posted("D1")).toHaveLength(0);
    sim.script({ text: "I survived." });
    gw = await spawnGateway(["--home", home, "--config", config, "--port", "0"]);
    await until(() => fake.posted("D1").length > 0, "the answer after restart", 15_000);
    expect(await gw.kill("SIGTERM")).toBe(0);
    expect(fake.posted("D1").map((m) => m.text)).toEqual(["I survived."]);
    const after = await counts(home);
    expect(after.inbox).toMatchObject({ answered: 1 });
    expect(after.outbox).toMatchObject({ sent: 1, pending: 0, sending: 0 });
  }, 60_000);

  it("killed after Slack stored the reply, before it was recorded: found by its metadata, posted once", async () => {
    const { home, config } = newHome();
    let gw = await spawnGateway(["--home", home, "--config", config, "--port", "0"]);
    sim.script({ text: "exactly once" });
    fake.failNext("chat.postMessage", { hangAfter: true }); // stored, but the answer never comes
    await fake.userMessage({ channel: "D2", user: "UANN", text: "reply once" });
    await until(() => fake.posted("D2").length === 1, "the stored post", 10_000);
    await gw.kill("SIGKILL");
    expect((await counts(home)).outbox).toMatchObject({ sending: 1 });
    gw = await spawnGateway(["--home", home, "--config", config, "--port", "0"]);
    await until(async () => (await counts(home)).outbox.sent === 1, "the reply recorded as sent", 15_000);
    expect(await gw.kill("SIGTERM")).toBe(0);
    expect(fake.posted("D2").map((m) => m.text)).toEqual(["exactly once"]);
    expect(fake.calls("conversations.history").length).toBeGreaterThanOrEqual(1);
    expect(fake.calls("chat.postMessage").filter((c) => c.params.channel === "D2")).toHaveLength(1);
  }, 60_000);
});
