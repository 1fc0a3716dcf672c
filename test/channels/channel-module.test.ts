/**
 * A new platform is one folder and one registry line: a test adds a dummy channel module next to
 * the registry's, and the gateway configures it (`channels.dummy`), builds it, secures it with
 * the access policy the module declares, routes its messages to the agent and sends the replies
 * back — with no other code changed. A channel without a policy admits no one.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { channelModules } from "../../src/channels/registry.js";
import { parseConfig } from "../../src/config/load.js";
import { type RunningGateway, startGateway } from "../../src/main.js";
import { silentLogger } from "../../src/util/logger.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { DummyChannel, dummyModule } from "../fixtures/dummy-channel/module.js";
import { simulatorConfig } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

describe("a channel module added with one registry line", () => {
  const modules = { ...channelModules, dummy: dummyModule };
  const home = mkdtempSync(join(tmpdir(), "sy-dummy-"));
  let sim: ModelSimulator;
  let gw: RunningGateway;
  let dummy: DummyChannel;

  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    const config = parseConfig(
      {
        ...simulatorConfig(sim, "anthropic"),
        channels: { dummy: { dmPolicy: "allowlist", allowFrom: ["ada"] } },
      },
      undefined,
      modules,
    );
    gw = await startGateway({
      config,
      configFile: undefined,
      home,
      env: {},
      logger: silentLogger(),
      port: 0,
      channelModules: modules,
    });
    dummy = gw.channels.list().find((c): c is DummyChannel => c instanceof DummyChannel) as DummyChannel;
  });
  afterAll(async () => {
    await gw.stop();
    await sim.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("is configured, built and started from its module", () => {
    expect(dummy).toBeInstanceOf(DummyChannel);
    expect(() => parseConfig({ channels: { dummy: {} } }, undefined)).toThrow(/channels\.dummy: unknown key/);
  });

  it("answers an allowed sender through the outbox", async () => {
    const result = await dummy.deliver("ada", "hello from dummy");
    expect(result.status).toBe("accepted");
    await until(() => dummy.sent.length > 0, "the reply on the dummy channel");
    expect(dummy.sent[0]?.text).toContain("hello from dummy");
    expect(dummy.sent[0]?.chatId).toBe("ada");
  });

  it("refuses a sender its declared policy does not allow, without a model call", async () => {
    const before = sim.requests.length;
    const result = await dummy.deliver("mallory", "let me in");
    expect(result).toMatchObject({ status: "rejected" });
    expect(sim.requests.length).toBe(before);
  });
});
