/**
 * A gateway restarted after a SIGKILL takes the dead one's work over at once, not after
 * `gateway.leaseTtlMs`: the killed process lingers as a zombie (its parent never reaps it, as a
 * container init may not), so its pid still "exists", yet its state and start time say it is
 * dead. The lease TTL is ten minutes here, so a wait for it cannot hide inside the test's time.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readProcStat } from "../../src/util/process-identity.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type GatewayProcess, spawnGateway } from "../helpers/gateway-process.js";
import { postChat } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

describe("restart after a SIGKILL", () => {
  let sim: ModelSimulator;
  let home: string;
  let config: string;
  const live = new Set<GatewayProcess>();
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    home = mkdtempSync(join(tmpdir(), "sy-takeover-"));
    config = join(home, "switchyard.yaml");
    writeFileSync(
      config,
      [
        "agent:",
        "  model: anthropic/claude-test",
        "gateway:",
        "  leaseTtlMs: 600000",
        "providers:",
        "  anthropic:",
        "    apiKey: sk-ant-test-key",
        `    baseUrl: ${sim.url}`,
        "logging:",
        "  level: warn",
      ].join("\n"),
    );
  });
  afterAll(async () => {
    for (const gw of live) {
      await gw.kill("SIGKILL").catch(() => undefined);
      await gw.kill("SIGKILL").catch(() => undefined);
    }
    await sim.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("takes over a zombie predecessor's sessions at once, mid-turn and kept-across-turns alike", async () => {
    const args = ["--home", home, "--config", config, "--port", "0"];
    const first = await spawnGateway(args, {}, { unreaped: true });
    live.add(first);
    // ann's session lease is kept across turns; bob is mid-turn at the kill.
    sim.script({ text: "hello ann" });
    expect((await postChat(first.url, "ann", "hi", "a1")).body).toMatchObject({ state: "answered" });
    sim.script({ hang: true });
    const seen = sim.requests.length;
    void postChat(first.url, "bob", "are you there?", "b1").catch(() => undefined);
    await until(() => sim.requests.length > seen, "bob's model call", 10_000);
    await first.kill("SIGKILL");
    expect(readProcStat(first.pid)?.state).toBe("Z"); // its pid still exists

    // From here the simulator echoes each message (its default responder).
    const second = await spawnGateway(args);
    live.add(second);
    // The runtime file named the zombie: it was stale, and now names the new gateway.
    expect(JSON.parse(readFileSync(join(home, "gateway.json"), "utf8"))).toMatchObject({ pid: second.pid });
    // Both answers come within the test's minute, against a ten-minute lease.
    const ann = await postChat(second.url, "ann", "still there?", "a2");
    expect(ann.body).toMatchObject({ state: "answered" });
    expect(ann.body.replies?.[0]?.text).toContain('you said "still there?"');
    const bob = await postChat(second.url, "bob", "hello?", "b2");
    expect(bob.body.replies?.[0]?.text).toContain('you said "hello?"');
    // bob's interrupted message was redone, before his next one (one session, in order).
    const said = sim.requests.slice(seen).map((r) => JSON.stringify(r.body));
    const redo = said.findIndex((b) => b.includes("are you there?") && !b.includes("hello?"));
    expect(redo).toBeGreaterThanOrEqual(0);
    expect(redo).toBeLessThan(said.findIndex((b) => b.includes("hello?")));
    expect(await second.kill("SIGTERM")).toBe(0);
    live.delete(second);
  }, 60_000);
});
