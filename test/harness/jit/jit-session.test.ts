/**
 * The JIT engine and the environment block inside AgentSession.run (our own ports, no SDK): an
 * assignment run's model-call limit and work items reach the rules (turn-limit, stale-work-items),
 * lines go to one call only and are recorded, and tools the policy withholds are named with why.
 */
import { describe, expect, it } from "vitest";
import { AgentSession, type RunInfo, type TurnSpec } from "../../../src/harness/agent-session.js";
import { JitEngine } from "../../../src/harness/jit/jit-engine.js";
import { ModelRouter } from "../../../src/harness/models/model-router.js";
import type { ModelProvider, ModelRequest, ProviderEvent } from "../../../src/harness/providers/types.js";
import { SystemPrompt } from "../../../src/harness/system-prompt.js";
import { fileTools } from "../../../src/harness/tools/file-tools.js";
import { ToolRegistry } from "../../../src/harness/tools/registry.js";
import { ToolPolicy } from "../../../src/harness/tools/tool-policy.js";
import { openSqliteStore } from "../../../src/store/sqlite/open-sqlite-store.js";
import { ManualClock } from "../../../src/util/clock.js";
import { silentLogger } from "../../../src/util/logger.js";

/** Answers from a script and records every request. */
class ScriptedProvider implements ModelProvider {
  readonly id = "scripted";
  readonly simulated = false;
  readonly requests: ModelRequest[] = [];
  constructor(readonly script: Array<ProviderEvent[]>) {}
  async *stream(request: ModelRequest): AsyncIterable<ProviderEvent> {
    this.requests.push(structuredClone(request));
    yield* this.script.shift() ?? [
      { type: "text_delta", text: "done" },
      { type: "stop", reason: "end_turn" },
    ];
  }
}

const call = (n: number): ProviderEvent[] => [
  { type: "tool_call", call: { id: `c${n}`, name: "noop", argumentsJson: "{}" } },
  { type: "stop", reason: "tool_use" },
];
const lastText = (r: ModelRequest | undefined): string => JSON.stringify(r?.messages.at(-1) ?? null);

async function run(
  provider: ScriptedProvider,
  options: { runInfo?: RunInfo; tools?: ToolRegistry; spec?: Partial<TurnSpec>; workspaceDir?: string } = {},
) {
  const store = openSqliteStore({ path: ":memory:" });
  const clock = new ManualClock();
  const granted = await store.leases.acquireSession("s1", "gw_test", clock.now(), 60_000);
  if (!granted) throw new Error("no lease");
  const workspaceDir = options.workspaceDir ?? "/nonexistent-workspace";
  const fired: string[] = [];
  const session = new AgentSession({
    transcript: store.transcript,
    router: ModelRouter.single(provider, "model-a", { profileId: "work" }),
    tools: options.tools ?? new ToolRegistry(),
    workspaceDir,
    limits: { maxTokens: 100, maxToolCallsPerRun: 50, historyLimit: 200 },
    prompt: new SystemPrompt({ workspaceDir }),
    jit: { engine: new JitEngine(), onFire: (f) => fired.push(...f.map((x) => x.ruleId)) },
    ...(options.runInfo ? { runInfo: () => options.runInfo } : {}),
    clock,
  });
  const result = await session.run({
    sessionKey: "s1",
    sessionId: "ses-1",
    runId: "run-1",
    trigger: "assignment",
    lease: { owner: "gw_test", fence: granted.fence },
    inputs: [{ type: "trigger", origin: "assignment", text: "work on it" }],
    lane: {
      signal: new AbortController().signal,
      progress: () => {},
      acquireModelSlot: async () => ({ release: () => {} }),
    },
    log: silentLogger(),
    ...options.spec,
  });
  const events = await store.transcript.tail("s1", "ses-1", 500);
  return { result, fired, jit: events.flatMap((e) => (e.payload.type === "jit" ? [e.payload] : [])) };
}

describe("JIT in AgentSession", () => {
  it("turn-limit: an assignment run's last model call is told how many calls are left", async () => {
    const provider = new ScriptedProvider([call(1), call(2), call(3), call(4)]);
    const info: RunInfo = { maxModelCalls: 5, workItems: () => ({ done: 0, total: 0, open: [] }) };
    const { fired, jit } = await run(provider, { runInfo: info });
    // 5 calls, the last 20% is the fifth: told at call 5 only.
    expect(
      provider.requests.map((r) => lastText(r).includes("1 call left: finish the current item")),
    ).toEqual([false, false, false, false, true]);
    expect(fired).toEqual(["turn-limit"]);
    expect(jit).toEqual([
      { type: "jit", rule: "turn-limit", line: "1 call left: finish the current item", call: 5 },
    ]);
  });

  it("stale-work-items: ten calls without a work item touched, with items open", async () => {
    const script = Array.from({ length: 10 }, (_, i) => call(i + 1));
    const provider = new ScriptedProvider(script);
    const info: RunInfo = {
      maxModelCalls: 100,
      workItems: () => ({ done: 1, total: 3, open: ["#2 [open] draft", "#3 [open] send"] }),
    };
    await run(provider, { runInfo: info });
    expect(lastText(provider.requests[10])).toContain("No work item updated in 10 calls (1/3 done)");
    expect(lastText(provider.requests[9])).not.toContain("No work item updated");
    // The environment block names the items at the start of the run.
    expect(JSON.stringify(provider.requests[0]?.messages)).toContain(
      "Work items: 1/3 done; open: #2 [open] draft; #3 [open] send",
    );
  });

  it("names the tools a group chat's policy withholds, and why", async () => {
    const tools = new ToolRegistry({ policy: new ToolPolicy() });
    for (const t of fileTools()) tools.register(t);
    const provider = new ScriptedProvider([]);
    await run(provider, {
      tools,
      spec: { trigger: "message", asker: { privateChat: false, groupChat: true, senderId: "u1" } },
    });
    const sent = JSON.stringify(provider.requests[0]?.messages);
    expect(sent).toMatch(
      /Not available here: [^(]*write_file[^(]*\(denied by tools\.groups\.deny \(group:fs-write\) in a group chat\)/,
    );
    expect(provider.requests[0]?.tools.map((t) => t.name)).not.toContain("write_file");
  });
});
