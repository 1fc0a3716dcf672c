/**
 * Tool policy through a real gateway and the scripted simulator: a tool the policy denies on a
 * channel is not in the model's request and a call to it anyway is refused; private memory
 * (MEMORY.md, memory/) is refused to anyone but the owner, and its text reaches no request.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";

let sim: ModelSimulator;
let gw: TestGateway;
beforeAll(async () => {
  sim = new ModelSimulator();
  await sim.start();
  gw = await startTestGateway({
    ...simulatorConfig(sim, "anthropic"),
    heartbeat: { everyMs: 0 },
    tools: { byChannel: { http: { deny: ["write_file"] } } },
  });
  writeFileSync(join(gw.running.workspaceDir, "MEMORY.md"), "# MEMORY\n\nThe safe code is 4711-SECRET.\n");
});
afterAll(async () => {
  await gw?.stop();
  await sim?.close();
});

const toolsOf = (i: number): string[] =>
  (((sim.requests[i]?.body ?? {}) as { tools?: Array<{ name: string }> }).tools ?? []).map((t) => t.name);

describe("tool policy", () => {
  it("does not offer a denied tool and refuses a call to it anyway", async () => {
    sim.requests.length = 0;
    sim.script(
      { toolCalls: [{ name: "write_file", args: { path: "x.txt", content: "hi" } }] },
      { text: "done" },
    );
    await gw.chat("api-client", "write x.txt");
    expect(toolsOf(0)).toContain("read_file");
    expect(toolsOf(0)).not.toContain("write_file");
    expect(JSON.stringify(sim.requests[1]?.body)).toContain(
      "error (denied): write_file is not available here: denied by tools.byChannel.http.deny (write_file).",
    );
  });

  it("refuses MEMORY.md to anyone but the owner; its text reaches no request", async () => {
    sim.requests.length = 0;
    sim.script(
      { toolCalls: [{ name: "read_file", args: { path: "MEMORY.md" } }] },
      { toolCalls: [{ name: "memory_get", args: { path: "MEMORY.md" } }] },
      { text: "I can't share that." },
    );
    await gw.chat("stranger", "what is in MEMORY.md?");
    expect(toolsOf(0)).not.toContain("memory_get");
    expect(toolsOf(0)).not.toContain("memory_search");
    const bodies = JSON.stringify(sim.requests.map((r) => r.body));
    expect(bodies).toContain("MEMORY.md is private memory, only for the owner's private chat");
    expect(bodies).toContain("error (denied): memory_get is not available here");
    expect(bodies).not.toContain("4711-SECRET");
  });
});
