/**
 * The harness's one entry for a turn, whatever started it: `AgentSession.run(spec)` records the
 * turn's inputs, loads the session's transcript, repairs what a crash left half done, assembles
 * the context (system prompt from the workspace, the conversation), lets the hooks transform it,
 * and runs the loop. Everything before the final answer is appended as it happens; the final
 * answer (or the failure) is returned for the caller to commit with its replies.
 */
import type { SessionFence } from "../store/repos/lease-repo.js";
import type { SessionMode } from "../store/repos/session-repo.js";
import type { TranscriptEvent, TranscriptPayload, TranscriptRepo } from "../store/repos/transcript-repo.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import { type TurnHooks, composeHooks } from "./hooks.js";
import type { UsageOrigin } from "../store/repos/usage-repo.js";
import type { ModelAccess } from "./models/model-router.js";
import type { ProviderError } from "./providers/provider-error.js";
import type { ChatMessage } from "./providers/types.js";
import type { PromptTurn, SystemPrompt } from "./system-prompt.js";
import { type AgentRunResult, type RunLaneContext, runAgent } from "./run.js";
import type { ToolRegistry } from "./tools/registry.js";
import type { Asker, ReplyTarget } from "./tools/types.js";
import { findOrphanedToolCalls, toChatMessages } from "./transcript.js";
import { TopLevelListing, environmentBlock } from "./environment-context.js";
import type { JitEngine } from "./jit/jit-engine.js";
import { JitRunTracker } from "./jit/jit-run-tracker.js";
import type { JitFiring } from "./jit/types.js";
import { modeContext } from "./modes/mode-context.js";
import { toolsForMode } from "./modes/mode-tools.js";
import { ToolSubset } from "./tools/tool-subset.js";

/** What started a turn. */
export type TurnTrigger = "message" | "heartbeat" | "cron" | "wake" | "subagent" | "assignment";

/** The bounds of one turn. */
export interface TurnLimits {
  /** Output tokens per model call. */
  maxTokens: number;
  /** Tool calls per turn; past it the model must answer without tools. */
  maxToolCallsPerRun: number;
  /** Parallel-safe calls of one model turn run at once (runAgent's maxParallelTools); default 4. */
  maxParallelTools?: number;
  /** Transcript events loaded as the conversation. */
  historyLimit: number;
}

/**
 * The transcript as the harness reads and writes it: the store's repository, of which it needs
 * `tail` and the fenced `append` (refused, false, once the turn's lease no longer holds).
 */
export type TranscriptAccess = Pick<TranscriptRepo, "tail" | "append">;

/** The session's lease moved to another owner: this turn may write nothing more. */
export class LeaseLostError extends Error {
  readonly kind = "lease_lost" as const;
  constructor(readonly sessionKey: string) {
    super(`the lease of session ${sessionKey} is held by another process now`);
    this.name = "LeaseLostError";
  }
}

/** One turn to run. */
export interface TurnSpec {
  sessionKey: string;
  sessionId: string;
  runId: string;
  trigger: TurnTrigger;
  /** The session lease the turn runs under: every append is fenced by it. */
  lease: SessionFence;
  /**
   * Recorded before the context is loaded, e.g. a heartbeat's instruction. (A message turn's
   * user events are appended when its messages are claimed, in the same step.)
   */
  inputs: TranscriptPayload[];
  /** Tools offered this turn; default the session's. */
  tools?: ToolRegistry;
  /**
   * A sub-agent's turn: the helpers' short system prompt (AgentSessionOptions.helperPrompt) and
   * only these tools (the parent's offered ones it was given); default the agent's prompt, all tools.
   */
  helper?: { tools: readonly string[] };
  /** Overrides of the session's limits. */
  limits?: Partial<TurnLimits>;
  lane: RunLaneContext;
  /** The chat the turn answers in (what the prompt says of it, and whether MEMORY.md is loaded). */
  chat?: ChatContext;
  /** Where the turn's answer goes, for tools (a reminder scheduled from a chat goes back to it). */
  replyTarget?: ReplyTarget;
  /** Who the turn answers, for tools (whether the chat is private, the sender). */
  asker?: Asker;
  /** Who the work is for (the caps treat background work differently); default human. */
  origin?: UsageOrigin;
  /** The session's `/model` choice (strict: no fallback); null for the configured chain. */
  modelOverride?: string | null;
  /**
   * The session's mode (SessionRecord.mode); default normal. Plan mode narrows the tools offered
   * and run (harness/modes/); plan and execute mode add a block to the volatile context.
   */
  mode?: SessionMode;
  /** Live text of the answer (someone is waiting for it). */
  onTextDelta?(text: string): void;
  /** The last `chars` characters of live text were discarded (a failed model attempt). */
  onTextReset?(chars: number): void;
  /** A one-line notice for the person while the turn waits for a cooling auth profile. */
  onNotice?(text: string): void;
  /** Messages that arrived while running (steer mode), taken at each tool boundary. */
  takeSteered?(): Promise<string[]>;
  /** Every provider failure, recovered ones included (metrics). */
  onProviderError?(error: ProviderError): void;
  log: Logger;
}

/** Options of {@link AgentSession}; every turn shares them. */
export interface AgentSessionOptions {
  transcript: TranscriptAccess;
  router: ModelAccess;
  tools: ToolRegistry;
  workspaceDir: string;
  limits: TurnLimits;
  /** The tiered system prompt (its stable part is cached between turns). */
  prompt: SystemPrompt;
  /** The short prompt of sub-agents' turns (TurnSpec.helper); default `prompt`. */
  helperPrompt?: SystemPrompt;
  /** Hook sets, called in this order; default none. */
  hooks?: readonly TurnHooks[];
  /** Times `beforeStop` may send a turn on after an answer; default 3. */
  maxContinuations?: number;
  /** Just-in-time guidance before each model call (`agent.jit`); default none. */
  jit?: { engine: JitEngine; onFire?(firings: readonly JitFiring[]): void };
  /** What a run of a bigger piece of work (an assignment's) adds: its limit and work items. */
  runInfo?(runId: string): RunInfo | undefined;
  clock: Clock;
}

/** An assignment run as the turn sees it (JIT limits, the environment block). */
export interface RunInfo {
  /** Model calls the run may make. */
  maxModelCalls?: number;
  /** Its work items now: counts, and the open ones as one line each. */
  workItems(): { done: number; total: number; open: readonly string[] };
}

/** Owns a turn from its inputs to its answer (see the file header). */
export class AgentSession {
  readonly #o: AgentSessionOptions;
  readonly #hooks: TurnHooks;
  readonly #listing: TopLevelListing;

  constructor(options: AgentSessionOptions) {
    this.#o = options;
    this.#hooks = composeHooks(options.hooks ?? []);
    this.#listing = new TopLevelListing(options.workspaceDir);
  }

  /** Whether replies come from the built-in simulator. */
  get simulated(): boolean {
    return this.#o.router.simulated;
  }

  /** Runs the turn; model and tool failures end up in the result, never thrown. */
  async run(spec: TurnSpec): Promise<AgentRunResult> {
    const o = this.#o;
    const { sessionKey, sessionId, runId, log } = spec;
    const limits = { ...o.limits, ...spec.limits };
    const info = o.runInfo?.(runId);
    const tracker = o.jit
      ? new JitRunTracker({
          startedAtMs: o.clock.now(),
          maxToolCalls: limits.maxToolCallsPerRun,
          ...(info?.maxModelCalls !== undefined ? { maxModelCalls: info.maxModelCalls } : {}),
        })
      : undefined;
    const record = async (payloads: TranscriptPayload[]) => {
      const written = await o.transcript.append(
        sessionKey,
        sessionId,
        runId,
        payloads,
        o.clock.now(),
        spec.lease,
      );
      if (!written) throw new LeaseLostError(sessionKey);
    };
    // Compactions (a hook's, recorded through the turn) restart the JIT's post-compaction count.
    const append = tracker
      ? async (payloads: TranscriptPayload[]) => {
          await record(payloads);
          for (const p of payloads) if (p.type === "compaction") tracker.compacted();
        }
      : record;
    if (spec.inputs.length > 0) await append(spec.inputs);

    const tail = await o.transcript.tail(sessionKey, sessionId, limits.historyLimit);
    const repairs = findOrphanedToolCalls(tail);
    if (repairs.length > 0) {
      log.warn(
        { count: repairs.length },
        "transcript repair: tool calls left without results by an interruption",
      );
      await append(repairs);
    }
    const mode = spec.mode ?? "normal";
    const moded = toolsForMode(spec.tools ?? o.tools, { mode, sessionKey, workspaceDir: o.workspaceDir });
    const tools = spec.helper
      ? new ToolSubset(moded, spec.helper.tools, "not given to this helper by its parent")
      : moded;
    const chat = spec.chat ?? { privateChat: false, channel: "unknown", chatKind: "direct" as const };
    const model = o.router.currentRef?.(sessionKey, spec.modelOverride) ?? "unknown";
    const query = lastAsk(tail);
    // Tool sources this chat may use get ready first (an MCP server starts on first use).
    const toolContext = { replyTarget: spec.replyTarget, asker: spec.asker };
    await tools.prepare(toolContext, spec.lane.signal);
    const items = info?.workItems();
    if (items && tracker) tracker.workItems(items.done, items.total, false);
    const environment = environmentBlock({
      missing: tools
        .decisions(toolContext)
        .filter((d) => !d.allowed)
        .map((d) => ({ name: d.tool.name, reason: d.reason ?? "denied by the tools policy" })),
      listing: await this.#listing.entries(),
      ...(items ? { workItems: items } : {}),
    });
    const prompt = await (spec.helper ? (o.helperPrompt ?? o.prompt) : o.prompt).build(
      { ...chat, model, query, environment },
      tools.specs(toolContext),
      new Date(o.clock.now()),
    );
    const turn = {
      sessionKey,
      sessionId,
      runId,
      trigger: spec.trigger,
      acquireModelSlot: () => spec.lane.acquireModelSlot(),
      append,
      ...(spec.replyTarget ? { replyTarget: spec.replyTarget } : {}),
      ...(spec.asker ? { asker: spec.asker } : {}),
    };
    // Orphaned calls read as interrupted in the conversation whether or not the repair is loaded.
    // The volatile tier rides on the newest user message: the system prompt stays cache-stable.
    const modeBlock = await modeContext(mode, sessionKey, o.workspaceDir);
    const volatile = modeBlock === "" ? prompt.volatile : `${prompt.volatile}\n\n${modeBlock}`;
    let context = { system: prompt.stable, messages: withVolatile(toChatMessages(tail), volatile) };
    if (this.#hooks.transformContext) {
      context = await this.#hooks.transformContext(context, { ...turn, signal: spec.lane.signal });
    }
    return runAgent({
      runId,
      sessionKey,
      router: o.router,
      system: context.system,
      messages: context.messages,
      tools,
      workspaceDir: o.workspaceDir,
      maxTokens: limits.maxTokens,
      maxToolCallsPerRun: limits.maxToolCallsPerRun,
      ...(limits.maxParallelTools !== undefined ? { maxParallelTools: limits.maxParallelTools } : {}),
      lane: spec.lane,
      logger: log,
      append,
      hooks: this.#hooks,
      turn,
      ...(o.jit && tracker
        ? {
            jit: {
              engine: o.jit.engine,
              tracker,
              now: () => o.clock.now(),
              ...(info ? { workItems: () => info.workItems() } : {}),
              ...(o.jit.onFire ? { onFire: o.jit.onFire } : {}),
            },
          }
        : {}),
      ...(o.maxContinuations !== undefined ? { maxContinuations: o.maxContinuations } : {}),
      ...(spec.takeSteered ? { takeSteered: spec.takeSteered } : {}),
      ...(spec.replyTarget ? { replyTarget: spec.replyTarget } : {}),
      ...(spec.asker ? { asker: spec.asker } : {}),
      ...(spec.onTextDelta ? { onTextDelta: spec.onTextDelta } : {}),
      ...(spec.onTextReset ? { onTextReset: spec.onTextReset } : {}),
      ...(spec.onNotice ? { onNotice: spec.onNotice } : {}),
      ...(spec.origin ? { origin: spec.origin } : {}),
      ...(spec.modelOverride ? { modelOverride: spec.modelOverride } : {}),
      ...(spec.onProviderError ? { onProviderError: spec.onProviderError } : {}),
    });
  }
}

/** The chat a turn answers in, as the prompt describes it. */
export type ChatContext = Omit<PromptTurn, "model" | "extra" | "query" | "environment">;

/** The newest thing asked (a person's message or a trigger), for memory recall. */
function lastAsk(events: readonly TranscriptEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const p = events[i]?.payload;
    if (p?.type === "user" || p?.type === "trigger") return p.text.slice(0, 500);
  }
  return undefined;
}

/** Puts the turn's volatile context before the newest user message (a copy; the rest unchanged). */
export function withVolatile(messages: ChatMessage[], volatile: string): ChatMessage[] {
  if (volatile === "") return messages;
  const i = messages.map((m) => m.role).lastIndexOf("user");
  if (i < 0) return messages;
  const copy = [...messages];
  const m = copy[i] as Extract<ChatMessage, { role: "user" }>;
  copy[i] = { role: "user", content: `<context>\n${volatile}\n</context>\n\n${m.content}` };
  return copy;
}
