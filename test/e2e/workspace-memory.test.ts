/**
 * Workspace memory through a real gateway: MEMORY.md and the daily notes reach the model in a
 * private chat (the console) and never in a shared one (the HTTP API); the environment block
 * rides on the newest message while the system prompt stays byte-identical between turns.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, startTestGateway } from "../helpers/test-gateway.js";

let sim: ModelSimulator;
let gw: TestGateway;
beforeAll(async () => {
  sim = new ModelSimulator();
  await sim.start();
  gw = await startTestGateway({
    agent: { model: "anthropic/claude-test", timezone: "UTC", memoryRecall: true },
    providers: { anthropic: { apiKey: "sk-ant-memory-test", baseUrl: sim.url } },
    heartbeat: { everyMs: 0 },
  });
  writeFileSync(join(gw.running.workspaceDir, "MEMORY.md"), "# MEMORY\n\nAda's cat is called Pixel.\n");
  mkdirSync(join(gw.running.workspaceDir, "memory"), { recursive: true });
  const today = new Date().toISOString().slice(0, 10);
  writeFileSync(
    join(gw.running.workspaceDir, "memory", `${today}.md`),
    `# ${today}\n\n- booked the dentist for Friday\n`,
  );
  // A note a person wrote by hand (recall re-scans the memory files at most every 10 s).
  mkdirSync(join(gw.running.workspaceDir, "memory", "projects"), { recursive: true });
  writeFileSync(
    join(gw.running.workspaceDir, "memory", "projects", "garden.md"),
    "# Garden\n\n- the tomatoes go in the north bed\n",
  );
});
afterAll(async () => {
  await gw?.stop();
  await sim?.close();
});

async function post(path: string, body: unknown): Promise<void> {
  const res = await fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  await res.text();
}

const bodyOf = (i: number) =>
  (sim.requests[i]?.body ?? { messages: [] }) as { system?: unknown; messages: unknown[] };
const systemOf = (i: number) => JSON.stringify(bodyOf(i).system);
const lastMessageOf = (i: number) => JSON.stringify(bodyOf(i).messages.at(-1));

describe("workspace memory in the prompt", () => {
  it("MEMORY.md and today's note reach a private chat, never the shared HTTP API", async () => {
    sim.requests.length = 0;
    await post("/v1/console", { sender: "ada", text: "what is my cat called?" });
    expect(systemOf(0)).toContain("Pixel");
    expect(lastMessageOf(0)).toContain("booked the dentist");
    expect(lastMessageOf(0)).toContain("<context>");

    await post("/v1/chat", { sender: "api-client", text: "what is the cat called?" });
    expect(systemOf(1)).not.toContain("Pixel");
    expect(lastMessageOf(1)).not.toContain("booked the dentist");
  });

  it("recalls memory relevant to the message in a private chat, from a note a person wrote by hand", async () => {
    sim.requests.length = 0;
    await post("/v1/console", { sender: "ada", text: "where do the tomatoes go?" });
    expect(lastMessageOf(0)).toMatch(
      /Recalled from memory[\s\S]*memory\/projects\/garden\.md:\d+-\d+: .*north bed/,
    );
  });

  it("keeps the system prompt byte-identical between turns of a chat", async () => {
    sim.requests.length = 0;
    await post("/v1/console", { sender: "ada", text: "one" });
    await post("/v1/console", { sender: "ada", text: "two" });
    expect(systemOf(1)).toBe(systemOf(0));
  });
});
