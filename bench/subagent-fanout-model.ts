/**
 * The model side of the sub-agent fan-out bench: who is asking (the parent spawning, the parent
 * answering at once, a helper, the parent's wake, a person), the scripted turn for each, and a
 * provider that stamps every model call as the gateway sees it (stream start → its stop event),
 * around either the real Anthropic SDK (→ the simulator) or an in-process instant answer.
 */
import type { ModelProvider, ModelRequest, ProviderEvent } from "../src/harness/providers/types.js";
import type { ScriptedTurn, SimulatedRequest } from "../src/simulator/model-simulator.js";

/** How many helpers the parent spawns in one turn. */
export const HELPERS = 20;

/** Who a model call is for. */
export type CallKind = "spawn" | "asked" | "helper" | "wake" | "person" | "other";

/** One model call as the gateway made it (performance.now() stamps). */
export interface ModelCall {
  kind: CallKind;
  startMs: number;
  /** When its stop (or error) event reached the gateway; NaN while in flight. */
  endMs: number;
  /** A wake: how many helper results its request carried since the parent's last answer. */
  results: number;
}

const HELPER_MARK = "You are a helper agent";

function classify(helper: boolean, toolResult: boolean, last: string): CallKind {
  if (helper) return "helper";
  if (toolResult) return "asked";
  if (last.includes("[helper ")) return "wake";
  if (last.includes("fan out")) return "spawn";
  if (last.includes("what time")) return "person";
  return "other";
}

/** Who a request (as the simulator receives it, Anthropic dialect) is for. */
export function kindOfBody(r: SimulatedRequest): CallKind {
  const body = r.body as { system?: unknown; messages: unknown[] };
  const last = JSON.stringify(body.messages.at(-1) ?? {});
  return classify(
    JSON.stringify(body.system ?? "").includes(HELPER_MARK),
    last.includes('"tool_result"'),
    last,
  );
}

/** Who a request (as the gateway builds it) is for. */
export function kindOfRequest(r: ModelRequest): CallKind {
  const last = r.messages.at(-1);
  return classify(r.system.startsWith(HELPER_MARK), last?.role === "tool", JSON.stringify(last ?? {}));
}

/** The scripted answer for each kind of call. */
export function turnFor(kind: CallKind): ScriptedTurn {
  switch (kind) {
    case "spawn":
      return {
        toolCalls: Array.from({ length: HELPERS }, (_, i) => ({
          name: "spawn_agent",
          args: { task: `Count to ${i + 1}.`, label: `h${i + 1}` },
        })),
      };
    case "asked":
      return { text: `I've asked ${HELPERS} helpers; their results come next.` };
    case "helper":
      return { text: "counted" };
    case "wake":
      return { text: "Every result is in." };
    case "person":
      return { text: "tea time" };
    default:
      return { text: "ok" };
  }
}

/** Helper results in a wake's request: `[helper …]` blocks after the parent's last answer. */
function resultsIn(r: ModelRequest): number {
  const lastAnswer = r.messages.map((m) => m.role).lastIndexOf("assistant");
  return JSON.stringify(r.messages.slice(lastAnswer + 1)).split("[helper ").length - 1;
}

/** Answers in-process with {@link turnFor}: no SDK, no HTTP; what is left is the gateway's own work. */
export const instantProvider: ModelProvider = {
  id: "instant",
  simulated: false,
  async *stream(request: ModelRequest): AsyncIterable<ProviderEvent> {
    const turn = turnFor(kindOfRequest(request));
    if ("toolCalls" in turn) {
      for (const [i, call] of turn.toolCalls.entries())
        yield {
          type: "tool_call",
          call: { id: `c${i}`, name: call.name, argumentsJson: JSON.stringify(call.args) },
        };
      yield { type: "stop", reason: "tool_use" };
      return;
    }
    if ("text" in turn && turn.text) yield { type: "text_delta", text: turn.text };
    yield { type: "stop", reason: "end_turn" };
  },
};

/** Stamps every model call of the provider `inner()` returns (set once the simulator is up). */
export class TimedProvider implements ModelProvider {
  readonly id = "timed";
  readonly simulated = false;
  readonly calls: ModelCall[] = [];
  /** Called at each call's start and end (after the stamp). */
  onCall: (call: ModelCall) => void = () => {};
  readonly #inner: () => ModelProvider;

  constructor(inner: () => ModelProvider) {
    this.#inner = inner;
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ProviderEvent> {
    const kind = kindOfRequest(request);
    const call: ModelCall = {
      kind,
      startMs: performance.now(),
      endMs: Number.NaN,
      results: kind === "wake" ? resultsIn(request) : 0,
    };
    this.calls.push(call);
    this.onCall(call);
    for await (const event of this.#inner().stream(request, signal)) {
      if ((event.type === "stop" || event.type === "error") && Number.isNaN(call.endMs)) {
        call.endMs = performance.now();
        this.onCall(call);
      }
      yield event;
    }
  }
}

/** Milliseconds of [from, to] covered by at least one call's [startMs, endMs]. */
export function coveredMs(calls: readonly ModelCall[], from: number, to: number): number {
  const spans = calls
    .map((c) => [Math.max(from, c.startMs), Math.min(to, c.endMs)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let covered = 0;
  let reach = from;
  for (const [a, b] of spans) {
    if (b <= reach) continue;
    covered += b - Math.max(a, reach);
    reach = b;
  }
  return covered;
}
