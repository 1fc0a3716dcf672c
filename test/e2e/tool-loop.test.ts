/**
 * Tool-loop detection through a real gateway and the simulator: a model that repeats one call
 * with the same result is warned in the 5th result, stopped at the 10th, and the person is told
 * in one line; the run is recorded as failed with kind tool_loop.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";

let sim: ModelSimulator | undefined;
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  await sim?.close();
  gw = undefined;
  sim = undefined;
});

describe("tool-loop detection", () => {
  it("warns a model that repeats a call, then stops it, and tells the person", async () => {
    sim = new ModelSimulator();
    await sim.start();
    gw = await startTestGateway(simulatorConfig(sim, "anthropic"));
    const loop = { toolCalls: [{ name: "read_file", args: { path: "missing.md" } }] };
    sim.script(...Array.from({ length: 12 }, () => loop), { text: "never reached" });
    const res = await gw.chat("ann", "find it");
    expect(res.body.replies?.[0]?.text).toMatch(
      /^⚠️ I stopped: I was going round in circles \(called read_file 10 times with the same arguments and the same result\)/,
    );
    expect(sim.requests).toHaveLength(10);
    // The 5th result carried the warning into the model's next request.
    expect(JSON.stringify(sim.requests[5]?.body)).toContain(
      "[loop warning: you called read_file with these arguments 5 times",
    );
    const [run] = await gw.running.store.runs.recent(1);
    expect(run).toMatchObject({ outcome: "failed", errorKind: "tool_loop" });
  });
});
