/**
 * Heartbeats through a real gateway and the simulator: an empty checklist costs no model call;
 * an acknowledgement is not delivered; an alert reaches the chat that last spoke to the agent
 * directly; a failed heartbeat is recorded, never sent.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

let sim: ModelSimulator;
let gw: TestGateway;

beforeEach(async () => {
  sim = new ModelSimulator();
  await sim.start();
  gw = await startTestGateway(simulatorConfig(sim, "anthropic"));
});
afterEach(async () => {
  await gw.stop();
  await sim.close();
});

async function mailbox(sender: string): Promise<string[]> {
  const res = await fetch(`${gw.url}/v1/chat/replies?sender=${sender}&after=0`);
  const body = (await res.json()) as { replies: Array<{ text: string }> };
  return body.replies.map((r) => r.text);
}

async function runsOf(trigger: string) {
  return (await gw.running.store.runs.recent(50)).filter((r) => r.trigger === trigger);
}

function writeChecklist(text: string): void {
  writeFileSync(join(gw.running.workspaceDir, "HEARTBEAT.md"), text);
}

describe("heartbeat", () => {
  it("makes no model call while HEARTBEAT.md is the empty template", async () => {
    expect(gw.running.heartbeat).toBeDefined();
    expect(await gw.running.heartbeat?.beat()).toBe("skipped_idle");
    expect(sim.requests).toHaveLength(0);
  });

  it("keeps an acknowledgement to itself and sends an alert to the last direct chat", async () => {
    sim.script({ text: "Hello Ann." });
    await gw.chat("ann", "hi");
    writeChecklist("# Checks\n- If the bank letter is unanswered, remind me.\n");

    sim.script({ text: "HEARTBEAT_OK" });
    expect(await gw.running.heartbeat?.beat()).toBe("enqueued");
    await until(async () => (await runsOf("heartbeat")).length === 1, "the first heartbeat run");
    const [request] = sim.requests.slice(-1);
    const sent = JSON.stringify(request?.body);
    expect(sent).toContain("This is a scheduled heartbeat");
    expect(sent).toContain("If the bank letter is unanswered, remind me.");
    expect(await mailbox("ann")).toEqual(["Hello Ann."]);

    sim.script({ text: "Reminder: the bank letter is still unanswered." });
    await gw.running.heartbeat?.beat();
    await until(async () => (await runsOf("heartbeat")).length === 2, "the second heartbeat run");
    await until(async () => (await mailbox("ann")).length === 2, "the alert in Ann's mailbox");
    expect(await mailbox("ann")).toEqual(["Hello Ann.", "Reminder: the bank letter is still unanswered."]);
    // Heartbeats have their own session: Ann's conversation does not carry them.
    const annSession = await gw.running.store.sessions.get("agent:main:http:dm:ann");
    const annTail = await gw.running.store.transcript.tail(
      "agent:main:http:dm:ann",
      annSession?.sessionId ?? "",
      50,
    );
    expect(annTail.some((e) => e.payload.type === "trigger")).toBe(false);
  });

  it("delivers nothing when the agent calls heartbeat_ok, and shows it the scheduler's state", async () => {
    sim.script({ text: "Hi." });
    await gw.chat("cy", "hello");
    writeChecklist("- check the build\n");
    const { buildJob } = await import("../../src/cron/jobs.js");
    const { spec } = buildJob(
      { name: "digest", every: "1d", message: "send the digest", deliver: "none" },
      { agentId: "main", source: "cli", now: Date.now(), defaultTz: "UTC", channels: new Set() },
    );
    const job = await gw.running.store.cron.add(spec, Date.now() + 86_400_000, Date.now());
    await gw.running.store.cron.update(job.id, { failing: true }, Date.now());
    sim.script(
      { toolCalls: [{ name: "heartbeat_ok", args: {} }] },
      { text: "All quiet, but here is a long note the person should not get." },
    );
    await gw.running.heartbeat?.beat();
    await until(async () => (await runsOf("heartbeat")).length === 1, "the heartbeat run");
    expect((await runsOf("heartbeat"))[0]?.outcome).toBe("answered");
    expect(await mailbox("cy")).toEqual(["Hi."]);
    const sent = JSON.stringify(sim.requests.at(-2)?.body);
    expect(sent).toContain("--- scheduled jobs ---");
    expect(sent).toContain("FAILING: digest (every 1d)");
    // In a conversation the tool refuses: it is for heartbeats only.
    sim.script({ toolCalls: [{ name: "heartbeat_ok", args: {} }] }, { text: "Sure." });
    await gw.chat("cy", "anything?");
    expect(JSON.stringify(sim.requests.at(-1)?.body)).toContain("heartbeat_ok is only for heartbeat turns");
  });

  it("records a failed heartbeat without telling anyone", async () => {
    sim.script({ text: "Hi." });
    await gw.chat("bo", "hello");
    writeChecklist("- check the build\n");
    sim.script({ error: { status: 400, message: "bad request" } });
    await gw.running.heartbeat?.beat();
    await until(async () => (await runsOf("heartbeat")).length === 1, "the heartbeat run");
    expect((await runsOf("heartbeat"))[0]).toMatchObject({ outcome: "failed", errorKind: "invalid_request" });
    expect(await mailbox("bo")).toEqual(["Hi."]);
  });
});
