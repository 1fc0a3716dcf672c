/**
 * `/compact` through a channel (HTTP, the same router every platform uses): it answers that the
 * next turn compacts, and that turn first asks the model for a summary of the older turns; a
 * gateway whose commands could not reach the compactor answered "Compaction is not available
 * here." everywhere.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";

const isSummaryRequest = (body: unknown) => JSON.stringify(body).includes("You compact a conversation");

describe("/compact over /v1/chat", () => {
  let sim: ModelSimulator;
  let gw: TestGateway;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    const config = simulatorConfig(sim, "anthropic");
    gw = await startTestGateway({
      ...config,
      agent: { ...config.agent, compaction: { keepRecentTokens: 1_000 } },
    });
  });
  afterAll(async () => {
    await gw.stop();
    await sim.close();
  });

  it("compacts the conversation at the start of its next turn", async () => {
    // Enough history that older turns fall outside the 1,000 tokens kept verbatim.
    for (let i = 1; i <= 4; i++) {
      const r = await gw.chat(
        "ann",
        `note ${i}: ${"the harbour keeps its lamps lit all night. ".repeat(60)}`,
      );
      expect(r.body.state).toBe("answered");
    }
    expect(sim.requests.some((r) => isSummaryRequest(r.body))).toBe(false);

    const asked = sim.requests.length;
    const compact = await gw.chat("ann", "/compact");
    expect(compact.body.replies?.[0]?.text).toMatch(/will be compacted at the start of its next turn/);
    expect(sim.requests.length).toBe(asked); // a command makes no model call

    const next = await gw.chat("ann", "and now?");
    expect(next.body.state).toBe("answered");
    const calls = sim.requests.slice(asked);
    // The memory flush and the summary first, then the turn itself.
    expect(calls.slice(0, -1).some((c) => isSummaryRequest(c.body))).toBe(true);
    expect(isSummaryRequest(calls.at(-1)?.body)).toBe(false);
    const store = gw.running.store;
    const session = await store.sessions.get("agent:main:http:dm:ann");
    const recorded = await store.transcript.tail("agent:main:http:dm:ann", session?.sessionId ?? "", 500);
    expect(recorded.some((e) => e.payload.type === "compaction")).toBe(true);
  });
});
