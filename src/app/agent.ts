/**
 * The agent every turn runs as: its tools (workspace files, and the capabilities'), the tiered system
 * prompt, compaction (hooks), and the limits from the configuration.
 */
import path from "node:path";
import type { Config } from "../config/schema.js";
import { AgentSession, type TranscriptAccess } from "../harness/agent-session.js";
import { Compactor } from "../harness/compaction.js";
import { limitsFor } from "../harness/context/model-limits.js";
import { estimateTokens } from "../harness/context/tokens.js";
import { dailyNotePath, localDate, previousDate } from "../harness/memory/memory-paths.js";
import { loadSkills, skillIndexText } from "../harness/memory/skills.js";
import type { MemoryCapability } from "../capabilities/memory/module.js";
import { lazyTimeZone } from "../util/time-zone.js";
import type { ModelRouter } from "../harness/models/model-router.js";
import { SystemPrompt } from "../harness/system-prompt.js";
import { HELPER_INSTRUCTIONS } from "../harness/helper-instructions.js";
import { fileTools } from "../harness/tools/file-tools.js";
import { ToolPolicy } from "../harness/tools/tool-policy.js";
import { maxResultCharsFor, ToolRegistry } from "../harness/tools/registry.js";
import type { Tool } from "../harness/tools/types.js";
import type { ToolSource } from "../harness/tools/tool-source.js";
import type { TurnHooks } from "../harness/hooks.js";
import { NOT_IN_RUNS } from "../harness/assignments/assignment-tools.js";
import { ToolLoopDetector } from "../harness/tool-loop.js";
import { JitEngine } from "../harness/jit/jit-engine.js";
import type { RunInfo } from "../harness/agent-session.js";
import type { GatewayMetrics } from "../gateway/metrics.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";

/** What building the agent needs. */
export interface AgentSetup {
  store: { transcript: TranscriptAccess };
  router: Pick<ModelRouter, "simulated" | "stream" | "currentRef">;
  workspaceDir: string;
  clock: Clock;
  logger: Logger;
  /** The memory capability: recall for the prompt, memory_write for compaction's flush. */
  memory?: Pick<MemoryCapability, "writeTool" | "recall">;
  /** More tools offered to the model (the capabilities'), after the file tools. */
  tools?: readonly Tool[];
  /** Tools that come and go at run time (capabilities' tool sources, e.g. MCP servers). */
  toolSources?: readonly ToolSource[];
  /** Turn hooks of the capabilities, run after the harness's own. */
  hooks?: readonly TurnHooks[];
  /**
   * Assignments: the tools every turn gets (task_start, learn), those only their runs get, their
   * hooks, and where their runs' registry goes.
   */
  assignments?: {
    chatTools(): Tool[];
    runTools(): Tool[];
    hooks(humanTools: ReadonlySet<string>): TurnHooks;
    useRegistry(registry: ToolRegistry): void;
    /** An assignment run's limit and work items (JIT, the environment block). */
    runInfo(runId: string): RunInfo | undefined;
  };
  /** Counts JIT firings; default none. */
  metrics?: Pick<GatewayMetrics, "jitFirings">;
  /** Told after a turn's events were written (the control page follows a running turn). */
  onAppended?: (sessionKey: string) => void;
}

/** The agent session, its compactor (for `/compact`), and what to close on stop. */
export function buildAgent(
  config: Config,
  deps: AgentSetup,
): { session: AgentSession; compactor: Compactor } {
  const { agent } = config;
  const timeZone = lazyTimeZone(agent.timezone);
  const windowOf = (sessionKey: string) =>
    limitsFor(deps.router.currentRef(sessionKey), config.models ?? {}).contextWindow;
  const primaryWindow = limitsFor(config.agent.model, config.models ?? {}).contextWindow;
  const policy = new ToolPolicy(config.tools);
  const tools = new ToolRegistry({
    timeoutMs: agent.toolTimeoutMs,
    policy,
    // No single result over 30 % of the window (≈ 4 characters a token), and never over 64k chars.
    maxResultChars: Math.min(64_000, maxResultCharsFor(primaryWindow)),
    outputDir: path.join(deps.workspaceDir, ".agent-output"),
    warn: (message) => deps.logger.warn(message),
  });
  for (const tool of fileTools()) tools.register(tool);
  for (const source of deps.toolSources ?? []) tools.addSource(source);
  // The compaction flush's memory_write, under the same policy (no MEMORY.md from a group).
  const memoryOnly = new ToolRegistry({ timeoutMs: agent.toolTimeoutMs, policy });
  if (deps.memory) memoryOnly.register(deps.memory.writeTool);
  for (const tool of [...(deps.tools ?? []), ...(deps.assignments?.chatTools() ?? [])]) tools.register(tool);
  // An assignment's runs get every tool plus theirs (work items, work_complete, ask_owner, …).
  const runTools = deps.assignments?.runTools() ?? [];
  const humanTools = new Set(runTools.filter((t) => t.requiresHuman).map((t) => t.name));
  if (deps.assignments) {
    const runRegistry = new ToolRegistry({
      timeoutMs: agent.toolTimeoutMs,
      policy,
      maxResultChars: Math.min(64_000, maxResultCharsFor(primaryWindow)),
      outputDir: path.join(deps.workspaceDir, ".agent-output"),
      warn: (message) => deps.logger.warn(message),
    });
    const shared = tools.list().filter((t) => !NOT_IN_RUNS.has(t.name));
    for (const tool of [...shared, ...runTools]) runRegistry.register(tool);
    for (const source of deps.toolSources ?? []) runRegistry.addSource(source);
    deps.assignments.useRegistry(runRegistry);
  }
  const compactor = new Compactor({
    router: deps.router,
    load: (sessionKey, sessionId) => deps.store.transcript.tail(sessionKey, sessionId, agent.historyLimit),
    workspaceDir: deps.workspaceDir,
    contextWindow: windowOf,
    // Tool schemas and the answer's room are part of every request.
    reserveTokens:
      estimateTokens(JSON.stringify(tools.specs())) +
      Math.min(agent.maxTokens, limitsFor(config.agent.model, config.models ?? {}).maxOutput),
    threshold: agent.compaction.threshold,
    keepRecentTokens: agent.compaction.keepRecentTokens,
    model: agent.compaction.model,
    memoryTools: memoryOnly,
    logger: deps.logger.child({ name: "harness.compaction" }),
  });
  const prompt = new SystemPrompt({
    workspaceDir: deps.workspaceDir,
    maxTokensPerFile: agent.contextFileMaxTokens,
    maxTotalTokens: agent.contextMaxTokens,
    timeZone,
    skillsIndex: skillsIndexEvery(5_000, deps.workspaceDir, deps.clock),
    ...(agent.memoryRecall && deps.memory ? { recall: deps.memory.recall } : {}),
    dailyNotePaths: (now) => {
      const today = localDate(now.getTime(), timeZone());
      return [dailyNotePath(previousDate(today)), dailyNotePath(today)];
    },
    logger: deps.logger.child({ name: "harness.prompt" }),
  });
  // Sub-agents' turns: a short prompt of their own (no context files, notes or memory).
  const helperPrompt = new SystemPrompt({
    workspaceDir: deps.workspaceDir,
    base: HELPER_INSTRUCTIONS,
    readSystemFile: false,
    contextFiles: [],
    privateContextFiles: [],
    timeZone,
  });
  const { onAppended } = deps;
  const transcript: TranscriptAccess = onAppended
    ? {
        tail: (...args) => deps.store.transcript.tail(...args),
        append: async (...args) => {
          const written = await deps.store.transcript.append(...args);
          if (written) onAppended(args[0]);
          return written;
        },
      }
    : deps.store.transcript;
  const session = new AgentSession({
    transcript,
    router: deps.router,
    tools,
    workspaceDir: deps.workspaceDir,
    limits: {
      maxTokens: agent.maxTokens,
      maxToolCallsPerRun: agent.maxToolCallsPerRun,
      maxParallelTools: agent.maxParallelTools,
      historyLimit: agent.historyLimit,
    },
    prompt,
    helperPrompt,
    // An assignment's continuation prompts are bounded by its own setting, not the loop's default.
    maxContinuations: Math.max(3, config.assignments.maxContinuationPrompts),
    hooks: [
      compactor.hooks(),
      new ToolLoopDetector(agent.toolLoop).hooks(),
      ...(deps.assignments ? [deps.assignments.hooks(humanTools)] : []),
      ...(deps.hooks ?? []),
    ],
    ...(agent.jit.enabled
      ? {
          jit: {
            engine: new JitEngine({ disable: agent.jit.disable }),
            onFire: (firings) => {
              for (const f of firings) deps.metrics?.jitFirings.inc({ rule: f.ruleId });
            },
          },
        }
      : {}),
    ...(deps.assignments ? { runInfo: (runId: string) => deps.assignments?.runInfo(runId) } : {}),
    clock: deps.clock,
  });
  return { session, compactor };
}

/**
 * The skills index, re-read at most every `ms` (a new or edited skill shows within that time):
 * reading skills/ takes directory walks a turn should not pay for.
 */
function skillsIndexEvery(ms: number, workspaceDir: string, clock: Clock): () => Promise<string> {
  let cached: { at: number; text: string } | undefined;
  return async () => {
    const now = clock.now();
    if (cached && now - cached.at < ms) return cached.text;
    const text = skillIndexText((await loadSkills(workspaceDir)).skills);
    cached = { at: now, text };
    return text;
  };
}
