/**
 * AgentSession.run: one entry for every turn. Hooks plug into the loop (context transform,
 * tool policy before and after, stop decision, context overflow), and the model router's
 * `attempt` events say who answered, so the run record never guesses.
 */
import { SystemPrompt } from "../../src/harness/system-prompt.js";
import { describe, expect, it } from "vitest";
import { AgentSession, type TurnSpec } from "../../src/harness/agent-session.js";
import type { TurnHooks } from "../../src/harness/hooks.js";
import { ModelRouter } from "../../src/harness/models/model-router.js";
import type { ModelProvider, ModelRequest, ProviderEvent } from "../../src/harness/providers/types.js";
import { ProviderError } from "../../src/harness/providers/provider-error.js";
import { ToolRegistry } from "../../src/harness/tools/registry.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import { ManualClock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";

/** A provider that answers from a script and records every request (our own port, no SDK). */
class ScriptedProvider implements ModelProvider {
  readonly id = "scripted";
  readonly simulated = false;
  readonly requests: ModelRequest[] = [];
  constructor(readonly script: Array<ProviderEvent[]>) {}
  async *stream(request: ModelRequest): AsyncIterable<ProviderEvent> {
    this.requests.push(structuredClone(request));
    const events = this.script.shift() ?? [
      { type: "text_delta", text: "(script ended)" },
      { type: "stop", reason: "end_turn" },
    ];
    yield* events;
  }
}

const text = (t: string): ProviderEvent[] => [
  { type: "text_delta", text: t },
  { type: "stop", reason: "end_turn" },
];
const toolCall = (name: string, args: unknown): ProviderEvent[] => [
  { type: "tool_call", call: { id: `call-${name}`, name, argumentsJson: JSON.stringify(args) } },
  { type: "stop", reason: "tool_use" },
];

async function setup(provider: ScriptedProvider, hooks: TurnHooks[] = [], tools = new ToolRegistry()) {
  const store = openSqliteStore({ path: ":memory:" });
  const clock = new ManualClock();
  const granted = await store.leases.acquireSession("s1", "gw_test", clock.now(), 60_000);
  if (!granted) throw new Error("no lease");
  const session = new AgentSession({
    transcript: store.transcript,
    router: ModelRouter.single(provider, "model-a", { profileId: "work" }),
    tools,
    workspaceDir: "/nonexistent-workspace",
    limits: { maxTokens: 100, maxToolCallsPerRun: 10, historyLimit: 50 },
    prompt: new SystemPrompt({ workspaceDir: "/nonexistent-workspace" }),
    hooks,
    clock,
  });
  const spec = (over: Partial<TurnSpec> = {}): TurnSpec => ({
    sessionKey: "s1",
    sessionId: "ses-1",
    runId: "run-1",
    trigger: "heartbeat",
    lease: { owner: "gw_test", fence: granted.fence },
    inputs: [{ type: "trigger", origin: "heartbeat", text: "check the list" }],
    lane: {
      signal: new AbortController().signal,
      progress: () => {},
      acquireModelSlot: async () => ({ release: () => {} }),
    },
    log: silentLogger(),
    ...over,
  });
  return { store, session, spec };
}

describe("AgentSession", () => {
  it("records the inputs, runs the loop and names who answered from the router's attempt events", async () => {
    const provider = new ScriptedProvider([text("all fine")]);
    const { session, spec, store } = await setup(provider);
    const result = await session.run(spec());
    expect(result.outcome).toBe("answered");
    expect(result.final?.text).toBe("all fine");
    expect(result.attempts).toEqual([
      { provider: "scripted", model: "model-a", profileId: "work", outcome: "ok", waitMs: 0 },
    ]);
    expect(provider.requests[0]?.model).toBe("model-a");
    const tail = await store.transcript.tail("s1", "ses-1", 10);
    expect(tail.map((e) => e.payload.type)).toEqual(["trigger"]);
  });

  it("lets transformContext rewrite what the model is given", async () => {
    const provider = new ScriptedProvider([text("ok")]);
    const hook: TurnHooks = {
      transformContext: async (context, turn) => ({
        system: `${context.system}\n\nRECALLED for ${turn.trigger}`,
        messages: [...context.messages, { role: "user", content: "and a recalled note" }],
      }),
    };
    const { session, spec } = await setup(provider, [hook]);
    await session.run(spec());
    expect(provider.requests[0]?.system).toMatch(/RECALLED for heartbeat$/);
    expect(provider.requests[0]?.messages.at(-1)).toEqual({ role: "user", content: "and a recalled note" });
  });

  it("runs beforeToolCall and afterToolCall around every tool: a refusal is an error result", async () => {
    const tools = new ToolRegistry();
    const provider = new ScriptedProvider([toolCall("delete_everything", {}), text("I could not")]);
    const seen: string[] = [];
    const { session, spec } = await setup(
      provider,
      [
        {
          beforeToolCall: async (call) =>
            call.name === "delete_everything" ? { block: "not allowed here" } : undefined,
          afterToolCall: async (call, outcome) => {
            seen.push(`${call.name}: ${outcome.content}`);
            return { ...outcome, content: `${outcome.content} (checked)` };
          },
        },
      ],
      tools,
    );
    const result = await session.run(spec());
    expect(result.final?.text).toBe("I could not");
    expect(seen).toEqual(["delete_everything: error: not run — not allowed here"]);
    const toolMessage = provider.requests[1]?.messages.find((m) => m.role === "tool");
    expect(toolMessage).toMatchObject({
      content: "error: not run — not allowed here (checked)",
      isError: true,
    });
  });

  it("continues when beforeStop objects, at most maxContinuations times", async () => {
    const provider = new ScriptedProvider([
      text("done?"),
      text("done?"),
      text("done?"),
      text("done?"),
      text("never"),
    ]);
    let asked = 0;
    const { session, spec, store } = await setup(provider, [
      { beforeStop: async () => (++asked > 0 ? { continueWith: "not yet: call work_complete" } : undefined) },
    ]);
    const result = await session.run(spec());
    expect(result.outcome).toBe("answered");
    expect(result.modelCalls).toBe(4); // the first answer, then 3 continuations, then it stops
    expect(provider.requests[1]?.messages.at(-1)).toEqual({
      role: "user",
      content: "not yet: call work_complete",
    });
    const nudges = (await store.transcript.tail("s1", "ses-1", 50)).filter(
      (e) => e.payload.type === "trigger" && e.payload.origin === "continuation",
    );
    expect(nudges).toHaveLength(3);
  });

  it("retries a call once with the smaller context onContextOverflow returns", async () => {
    const overflow = new ProviderError("context_overflow", "prompt is too long", { provider: "scripted" });
    const provider = new ScriptedProvider([[{ type: "error", error: overflow }], text("fits now")]);
    const { session, spec } = await setup(provider, [
      {
        onContextOverflow: async (context) => ({
          system: context.system,
          messages: context.messages.slice(-1),
        }),
      },
    ]);
    const result = await session.run(spec());
    expect(result.final?.text).toBe("fits now");
    expect(result.modelCalls).toBe(2);
  });

  it("fails on an overflow no hook can shrink", async () => {
    const overflow = new ProviderError("context_overflow", "prompt is too long", { provider: "scripted" });
    const provider = new ScriptedProvider([[{ type: "error", error: overflow }]]);
    const { session, spec } = await setup(provider, [{ onContextOverflow: async () => undefined }]);
    const reported: string[] = [];
    const result = await session.run(spec({ onProviderError: (e) => void reported.push(e.kind) }));
    expect(result.outcome).toBe("failed");
    expect(reported).toEqual(["context_overflow"]); // reported once, not again on the way out
    expect((result.error as ProviderError).kind).toBe("context_overflow");
  });
});
