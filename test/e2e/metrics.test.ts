/**
 * /metrics through a real gateway: provider errors are counted by kind, also those the retry
 * wrapper recovered from, next to runs, tokens and queue depth.
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

async function metrics(url: string): Promise<string> {
  const res = await fetch(`${url}/metrics`);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
  return res.text();
}

describe("/metrics", () => {
  it("counts a provider error the retry recovered from, and the one that failed the turn", async () => {
    sim = new ModelSimulator();
    await sim.start();
    gw = await startTestGateway(simulatorConfig(sim, "anthropic"));
    sim.script({ error: { status: 429, retryAfterSeconds: 0 } }, { text: "after one retry" });
    expect((await gw.chat("ann", "hi")).body.replies).toEqual([{ text: "after one retry" }]);
    sim.script({ error: { status: 401 } });
    expect((await gw.chat("ann", "again")).body.state).toBe("failed");

    const text = await metrics(gw.url);
    expect(text).toMatch(/^switchyard_provider_errors_total\{[^}]*kind="rate_limit"[^}]*\} 1$/m);
    expect(text).toMatch(/^switchyard_provider_errors_total\{[^}]*kind="auth"[^}]*\} 1$/m);
    expect(text).toMatch(/^switchyard_runs_total\{[^}]*outcome="answered"[^}]*\} 1$/m);
    expect(text).toMatch(/^switchyard_runs_total\{[^}]*outcome="failed"[^}]*\} 1$/m);
    expect(text).toMatch(/^switchyard_tokens_total\{[^}]*type="output"[^}]*\} [1-9]\d*$/m);
    expect(text).toMatch(/^switchyard_queue_depth\{priority="background"\} 0$/m);
  });
});
