/**
 * Parallel tool calls end to end: a real gateway over the HTTP channel, the real Anthropic SDK
 * against the model simulator. One model turn asks for several reads (and a write between
 * them); every result reaches the next request in the model's order, each under its own call id.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { capabilityModules } from "../../src/capabilities/registry.js";
import type { CapabilityModule } from "../../src/capabilities/types.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";

interface Block {
  type: string;
  id?: string;
  tool_use_id?: string;
  content?: unknown;
}

/** The tool_result blocks of the last request, as `<tool_use_id> <text>`. */
function lastResults(sim: ModelSimulator): string[] {
  const body = sim.requests.at(-1)?.body as { messages?: Array<{ content: unknown }> } | undefined;
  const blocks = (body?.messages ?? []).flatMap((m) =>
    Array.isArray(m.content) ? (m.content as Block[]) : [],
  );
  return blocks
    .filter((b) => b.type === "tool_result")
    .map((b) => `${b.tool_use_id} ${typeof b.content === "string" ? b.content : JSON.stringify(b.content)}`);
}

/**
 * A `web_search` (read-only, so parallel-safe) whose calls each wait until `width` calls are in
 * flight at once: run one after another, the first would wait until the tool timeout.
 */
function rendezvousSearch(width: number): CapabilityModule {
  let arrived = 0;
  let all = () => {};
  const together = new Promise<void>((resolve) => {
    all = resolve;
  });
  return {
    name: "rendezvous",
    create: () => ({
      tools: [
        {
          name: "web_search",
          description: "Searches (test).",
          parameters: z.strictObject({ query: z.string() }),
          groups: ["web"],
          run: async ({ query }) => {
            if (++arrived === width) all();
            await together;
            return { content: `found ${query} (${arrived} in flight together)` };
          },
        },
      ],
    }),
  };
}

describe("parallel tool calls", () => {
  let sim: ModelSimulator;
  let gw: TestGateway;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    gw = await startTestGateway(simulatorConfig(sim, "anthropic"));
    for (const [name, text] of [
      ["a.txt", "alpha"],
      ["b.txt", "beta"],
      ["c.txt", "gamma"],
      ["d.txt", "delta"],
    ])
      writeFileSync(join(gw.running.workspaceDir, name as string), text as string);
  });
  afterAll(async () => {
    await gw?.stop();
    await sim?.close();
  });

  it("answers several reads of one turn, each result under its call, in the model's order", async () => {
    const read = (path: string) => ({ name: "read_file", args: { path } });
    sim.script({ toolCalls: ["a.txt", "b.txt", "c.txt", "d.txt"].map(read) }, { text: "all four read" });
    const before = sim.requests.length;
    const r = await gw.chat("reader", "read the four files");
    expect(r.body.replies?.[0]?.text).toBe("all four read");
    expect(sim.requests.length - before).toBe(2);
    expect(lastResults(sim).map((l) => l.replace(/^toolu_sim_\d+_/, ""))).toEqual([
      "0 alpha",
      "1 beta",
      "2 gamma",
      "3 delta",
    ]);
    expect(lastResults(sim).every((l) => l.startsWith("toolu_sim_"))).toBe(true);
  });

  it("keeps a write between reads in order: the read after it sees what it wrote", async () => {
    sim.script(
      {
        toolCalls: [
          { name: "read_file", args: { path: "a.txt" } },
          { name: "write_file", args: { path: "a.txt", content: "rewritten" } },
          { name: "read_file", args: { path: "a.txt" } },
        ],
      },
      { text: "done" },
    );
    await gw.chat("writer", "rewrite a.txt");
    const results = lastResults(sim).map((l) => l.replace(/^toolu_sim_\d+_/, ""));
    expect(results[0]).toBe("0 alpha");
    expect(results[1]).toMatch(/^1 /);
    expect(results[2]).toBe("2 rewritten");
    expect(readFileSync(join(gw.running.workspaceDir, "a.txt"), "utf8")).toBe("rewritten");
  });

  it("runs the read-only calls of one turn at the same time", async () => {
    const sim2 = new ModelSimulator();
    await sim2.start();
    // One after another, the first search would wait for the others until this timeout.
    const agent = { model: "anthropic/claude-test", toolTimeoutMs: 5_000, progressTimeoutMs: 10_000 };
    const gw2 = await startTestGateway(
      { ...simulatorConfig(sim2, "anthropic"), agent },
      { capabilityModules: [...capabilityModules, rendezvousSearch(3)] },
    );
    try {
      const search = (query: string) => ({ name: "web_search", args: { query } });
      sim2.script({ toolCalls: ["x", "y", "z"].map(search) }, { text: "searched" });
      const r = await gw2.chat("searcher", "search three things");
      expect(r.body.replies?.[0]?.text).toBe("searched");
      expect(lastResults(sim2).map((l) => l.replace(/^toolu_sim_\d+_/, ""))).toEqual([
        "0 found x (3 in flight together)",
        "1 found y (3 in flight together)",
        "2 found z (3 in flight together)",
      ]);
    } finally {
      await gw2.stop();
      await sim2.close();
    }
  });
});
