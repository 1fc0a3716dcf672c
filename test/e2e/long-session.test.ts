/**
 * A long session end to end: 300 turns through a real gateway and the real Anthropic SDK, each
 * reading a large file with a tool, against a 16k-token window. Compaction keeps every request
 * under the window, never sends a tool call without its result (or the reverse), keeps an
 * identifier from turn 1 through every compaction. An HTTP sender is not the owner, so the
 * pre-compaction memory flush is not offered memory_write and no note reaches memory/ (the
 * owner's flush writes one: test/e2e/telegram-tools.test.ts). The model simulator plays a
 * careful model: it summarizes with the identifiers it is given, and would save a note when
 * told the conversation is about to be compacted.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SimulatedRequest } from "../../src/simulator/types.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, startTestGateway } from "../helpers/test-gateway.js";

const IDENTIFIER = "3f2b9c1e-7d4a-4e8b-9a61-0c5d2e8f4b17";
const TURNS = 300;
const WINDOW = 16_000;

type Block = { type: string; text?: string; id?: string; tool_use_id?: string; name?: string };
type Message = { role: string; content: string | Block[] };

function textOf(m: Message): string {
  return typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join("\n");
}

/** A careful model: summaries keep identifiers, a note is saved before compaction, turns read a file. */
function responder(request: SimulatedRequest) {
  const body = request.body as { system?: Array<{ text: string }>; messages: Message[] };
  const system = (body.system ?? []).map((b) => b.text).join("\n");
  const last = body.messages.at(-1) as Message;
  const lastText = textOf(last);
  if (system.startsWith("You compact a conversation")) {
    const all = body.messages.map(textOf).join("\n");
    const ids = [
      ...new Set(all.match(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g) ?? []),
    ];
    return {
      text: `## Goal\nKeep reading the log files the person asks about.\n## Decisions\nRead one file per turn.\n## Progress\nMany files read.\n## Last step\nRead a file.\n## Next step\nRead the next one.\n## Facts\nIdentifiers: ${ids.join(", ")}.\n${"Padding to pass the floor. ".repeat(8)}`,
    };
  }
  if (lastText.includes("about to be compacted")) {
    return {
      toolCalls: [
        {
          name: "memory_write",
          args: { target: "daily", text: `pre-compaction note: project ${IDENTIFIER}` },
        },
      ],
    };
  }
  if (
    last.role === "user" &&
    typeof last.content !== "string" &&
    last.content.some((b) => b.type === "tool_result")
  ) {
    return { text: "I read it." };
  }
  return { toolCalls: [{ name: "read_file", args: { path: "big.log" } }] };
}

describe("a long session", () => {
  let sim: ModelSimulator;
  let gw: TestGateway;
  beforeAll(async () => {
    sim = new ModelSimulator({ keepRequests: 100_000 });
    await sim.start();
    sim.setDefault(responder);
    gw = await startTestGateway({
      agent: { model: "anthropic/claude-test", compaction: { keepRecentTokens: 3_000 } },
      providers: { anthropic: { apiKey: "sk-ant-long-session", baseUrl: sim.url } },
      models: { "anthropic/claude-test": { contextWindow: WINDOW, maxOutput: 1_024 } },
      heartbeat: { everyMs: 0 },
    });
    // A log file of ~2k tokens: every turn reads it.
    writeFileSync(
      join(gw.running.workspaceDir, "big.log"),
      `${"2026-11-24 12:00:00 INFO request served in 12 ms\n".repeat(170)}`,
    );
  });
  afterAll(async () => {
    await gw?.stop();
    await sim?.close();
  });

  it("stays under the window for 300 turns, pairs every tool call with its result, keeps the identifier, and writes no note for a non-owner", async () => {
    const first = await gw.chat("ann", `Please remember project ${IDENTIFIER} and read big.log`);
    expect(first.body.state).toBe("answered");
    for (let i = 2; i <= TURNS; i++) {
      const res = await gw.chat("ann", `turn ${i}: read big.log again`);
      expect(res.body.state, `turn ${i}`).toBe("answered");
    }
    const requests = sim.requests.filter((r) => r.path === "/v1/messages");
    let compactions = 0;
    for (const r of requests) {
      const body = r.body as { system?: Array<{ text: string }>; messages: Message[]; tools?: unknown[] };
      const system = (body.system ?? []).map((b) => b.text).join("\n");
      if (system.startsWith("You compact a conversation")) {
        compactions++;
        continue;
      }
      // Under the window, counted as this "provider" (the simulator) counts: a quarter of the
      // request's characters — the same count its usage reports, which the gateway learns from.
      const tokens = Math.ceil(JSON.stringify(body).length / 4);
      if (tokens >= WINDOW) {
        const lastMsg = body.messages.at(-1) as Message;
        throw new Error(
          `request ${requests.indexOf(r)} of ${requests.length}: ${tokens} tokens, ${body.messages.length} messages, last: ${textOf(lastMsg).slice(0, 120)}`,
        );
      }
      // Every tool_use has its tool_result in the next message, and no result is orphaned.
      for (let i = 0; i < body.messages.length; i++) {
        const m = body.messages[i] as Message;
        if (typeof m.content === "string") continue;
        for (const b of m.content) {
          if (b.type === "tool_use") {
            const next = body.messages[i + 1] as Message | undefined;
            const ok =
              next &&
              typeof next.content !== "string" &&
              next.content.some((x) => x.type === "tool_result" && x.tool_use_id === b.id);
            expect(ok, `tool_use ${b.id} answered`).toBe(true);
          }
          if (b.type === "tool_result") {
            const prev = body.messages[i - 1] as Message | undefined;
            const ok =
              prev &&
              typeof prev.content !== "string" &&
              prev.content.some((x) => x.type === "tool_use" && x.id === b.tool_use_id);
            expect(ok, `tool_result ${b.tool_use_id} has its call`).toBe(true);
          }
        }
      }
    }
    expect(compactions).toBeGreaterThanOrEqual(3);
    // The identifier from turn 1 is still in what the last turn sent.
    const lastTurn = requests
      .filter((r) => !JSON.stringify(r.body).includes("You compact a conversation"))
      .at(-1);
    expect(JSON.stringify(lastTurn?.body)).toContain(IDENTIFIER);
    // Not the owner: no flush was asked, and nothing reached memory/.
    expect(requests.some((r) => JSON.stringify(r.body).includes("about to be compacted"))).toBe(false);
    const memory = join(gw.running.workspaceDir, "memory");
    const notes = existsSync(memory)
      ? readdirSync(memory).map((f) => readFileSync(join(memory, f), "utf8"))
      : [];
    expect(notes.join("\n")).not.toContain("pre-compaction note");
  }, 300_000);
});
