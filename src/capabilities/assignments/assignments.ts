/**
 * Multi-day assignments, wired: each run is a turn of the assignment's own session, started by
 * a wake (the scheduler's durable rows) as background work, so a person is never kept waiting
 * behind one. A fresh run starts from the project files (handoff); a run resumed after a
 * question continues its session with the owner's answer as the tool's result. At the end of
 * each run the stop decision (stop-decision.ts) says what comes next: another wake, a pause
 * for the owner, or the end, told to the owner in one message.
 */
import type { ChatTarget } from "../../channels/types.js";
import type { Config } from "../../config/schema.js";
import {
  type AssignmentDefaults,
  assignmentDefaults,
  isAssignmentSession,
  isOpen,
  queueRun,
} from "../../harness/assignments/assignments.js";
import {
  type AssignmentToolOptions,
  assignmentTools,
  learnTool,
} from "../../harness/assignments/assignment-tools.js";
import { type LiveRun, LiveRuns, assignmentHooks, runInfoOf } from "../../harness/assignments/live-run.js";
import type { RunInfo } from "../../harness/agent-session.js";
import { recordLearning, recordedLine } from "../../harness/assignments/learning-log.js";
import { ProjectFiles } from "../../harness/assignments/project-files.js";
import type { TurnHooks } from "../../harness/hooks.js";
import { resultText } from "../subagents/subagent-text.js";
import type { ToolRegistry } from "../../harness/tools/registry.js";
import type { Tool } from "../../harness/tools/types.js";
import type { ChannelDirectory } from "../../gateway/channel-directory.js";
import type { GatewayEvents } from "../../gateway/events.js";
import type { LaneQueue } from "../../gateway/lanes/lane-queue.js";
import type { LaneTaskContext } from "../../gateway/lanes/types.js";
import type { TurnRunner } from "../../gateway/turn-runner.js";
import type { PreparedTurn, TurnSource } from "../../gateway/turn-sources.js";
import type { Assignment, WorkItem } from "../../store/repos/assignment-repo.js";
import type { RunRecord } from "../../store/repos/run-repo.js";
import type { Wake } from "../../store/repos/wake-repo.js";
import type { Store } from "../../store/types.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { ExtraCommand } from "../../gateway/commands.js";
import { assignmentChatTools, taskCommands } from "./assignment-chat.js";
import { finishRun, mirror } from "./assignment-finish.js";
import { helperWaitNote, runInputs } from "./run-inputs.js";
import { resultsDue, waitHoldsUntil } from "../subagents/helper-waits.js";
import { OwnerMessages } from "./assignment-owner.js";

/** What the assignments need from the gateway. */
export interface AssignmentDeps {
  store: Store;
  workspaceDir: string;
  channels: ChannelDirectory;
  clock: Clock;
  logger: Logger;
  /** Pokes the scheduler so a new wake is seen now (`dueNow`: it is due at once: the shorter way). */
  poke(dueNow?: boolean): void;
  /** Where a cancelled assignment's run in flight is aborted. */
  lanes?: Pick<LaneQueue, "abortRunning">;
  /** The daily spend cap pauses background work: runs wait an hour instead of failing. */
  usage?: { backgroundPaused(): boolean } | undefined;
}

/** When a run that did not happen or was not saved is tried again. */
const RETRY_MS = 60_000;
/** How long a run waits while the daily spend cap pauses background work. */
const SPEND_CAP_WAIT_MS = 3_600_000;

/** Owns the assignments of one gateway: their runs, tools, hooks, owner messages and chat doors. */
export class Assignments {
  readonly runs = new LiveRuns();
  readonly files: ProjectFiles;
  readonly defaults: AssignmentDefaults;
  readonly #config: Config["assignments"];
  readonly #d: AssignmentDeps;
  readonly #log: Logger;
  #turns: TurnRunner | undefined;
  #registry: ToolRegistry | undefined;
  #events: Pick<GatewayEvents, "emit"> | undefined;
  /** Records of this gateway's committed runs (calls and cost included), from turn_committed. */
  readonly #committed = new Map<string, RunRecord>();
  readonly #owner: OwnerMessages;
  /** How contract checks run: commands under the tool timeout (60 s), so a slow one is a gap. */
  readonly #checks: { workspaceDir: string; allowCommands: boolean; commandTimeoutMs: number };
  /** When an assignment's PROGRESS.md was last mirrored from a tool's change. */
  readonly #mirrored = new Map<string, number>();

  constructor(config: Config, deps: AssignmentDeps) {
    this.#config = config.assignments;
    this.#d = deps;
    this.#log = deps.logger.child({ name: "assignments" });
    this.files = new ProjectFiles(deps.workspaceDir);
    this.defaults = assignmentDefaults(config.agent.id, config.assignments);
    const allowCommands = config.assignments.commandChecks;
    this.#checks = { workspaceDir: deps.workspaceDir, allowCommands, commandTimeoutMs: 45_000 };
    this.#owner = new OwnerMessages({
      store: deps.store,
      channels: deps.channels,
      clock: deps.clock,
      reportEveryMinutes: config.assignments.reportEveryMinutes,
      events: () => this.#events,
      poke: deps.poke,
    });
  }

  /** The turn runner and event bus, once built (they need the agent, which needs these tools). */
  attach(turns: TurnRunner, events: GatewayEvents): void {
    this.#turns = turns;
    this.#events = events;
    events.on((e) => {
      if (e.type === "turn_committed" && this.runs.get(e.run.runId)) this.#committed.set(e.run.runId, e.run);
    });
  }

  /** The hooks every turn gets (inert outside an assignment's run). */
  hooks(humanTools: ReadonlySet<string>): TurnHooks {
    return assignmentHooks({
      runs: this.runs,
      clock: this.#d.clock,
      maxContinuationPrompts: this.#config.maxContinuationPrompts,
      humanTools,
      checks: this.#checks,
    });
  }

  #toolOptions(): AssignmentToolOptions {
    const { store, clock } = this.#d;
    return {
      runs: this.runs,
      clock,
      checks: this.#checks,
      saved: (live) => this.#save(live),
      itemDone: (live, item) => this.#itemDone(live, item),
      writeSessionState: (id, text) => this.files.writeSessionState(id, text),
      learn: async (text, scope, source) => {
        const learning = { agentId: this.defaults.agentId, text, scope, source };
        return recordedLine(await recordLearning(store, this.#d.workspaceDir, learning, clock.now()));
      },
    };
  }

  /** A run in flight: its model-call limit and work items (JIT rules, the environment block, hooks). */
  runInfo(runId: string): RunInfo | undefined {
    const live = this.runs.get(runId);
    return live ? runInfoOf(live) : undefined;
  }

  /** Tools only an assignment's runs get. */
  runTools(): Tool[] {
    return assignmentTools(this.#toolOptions()).filter((t) => t.name !== "learn");
  }

  /** Tools every turn gets: task_start (from a chat) and learn. */
  chatTools(): Tool[] {
    return [...assignmentChatTools(this), learnTool(this.#toolOptions())];
  }

  /** True when an assignment waits on a question to this chat that this sender may answer. */
  waiting(target: ChatTarget, senderId: string): Promise<boolean> {
    return this.#owner.waiting(target, senderId);
  }

  /** The owner's message in a chat an assignment waits on: its answer (the reply to send, or undefined). */
  answer(target: ChatTarget, senderId: string, text: string, inboxId?: number): Promise<string | undefined> {
    return this.#owner.answer(target, senderId, text, inboxId);
  }

  /**
   * Helpers an assignment's run spawned have ended: its next run is due now (it claims their
   * results), unless it waits on its owner. False when `sessionKey` is not an assignment's.
   */
  async resultsArrived(sessionKey: string): Promise<boolean> {
    if (!isAssignmentSession(sessionKey)) return false;
    const { store, clock } = this.#d;
    const a = await store.assignments.get(sessionKey.slice(sessionKey.lastIndexOf(":") + 1));
    if (!a || !isOpen(a) || a.state === "requires_action") return true;
    await queueRun(store, a, clock.now(), "its helpers' results arrived", clock.now());
    this.#d.poke(true);
    return true;
  }

  /** Its run `runId` (if an assignment's) called wait_agents: it ends, and sleeps until `until` at most. */
  helpersAwaited(runId: string, until: number): void {
    const live = this.runs.get(runId);
    if (live) live.waitUntil = until;
  }

  /** The `/task` and `/tasks` commands. */
  commands(): ExtraCommand[] {
    return taskCommands(this);
  }

  /** Store, clock and the wake poke, for the chat doors (assignment-chat.ts). */
  get deps(): AssignmentDeps {
    return this.#d;
  }

  /** True for a wake this runs (the scheduler sends the others to their sessions). */
  owns(wake: Wake): boolean {
    return isAssignmentSession(wake.sessionKey);
  }

  /**
   * After a start: an open assignment without a waiting wake (a crash took it) gets one, and
   * every open one its PROGRESS.md / checkpoint.json again.
   */
  async recover(): Promise<void> {
    const { store, clock } = this.#d;
    for (const a of await store.assignments.list(this.defaults.agentId)) {
      // A message a crash kept from the outbox: the end, or a question.
      if (!isOpen(a) && a.state !== "cancelled" && !a.checkpoint.endNotified)
        await this.#owner.end(a, a.checkpoint.summary ?? undefined);
      if (a.state === "requires_action" && a.question && !a.question.sent && a.question.answer === undefined)
        await this.#owner.ask(a, a.question, true);
      if (!isOpen(a)) continue;
      await mirror(a, { files: this.files, log: this.#log }); // a crash may have cut one short
      if ((await store.wakes.list(a.sessionKey)).length > 0) continue;
      // A waiting question re-queues itself for its reminder or expiry when this wake runs; a
      // wait for helpers still holds until its deadline (their results wake it sooner).
      const rows = await store.subagents.listForParent(a.sessionKey);
      const at = waitHoldsUntil(rows, clock.now()) ?? clock.now();
      await queueRun(store, a, at, "resume after a restart", clock.now());
      this.#log.info({ assignment: a.id, state: a.state }, "assignment resumed after a restart");
    }
  }

  /**
   * A wake of an assignment's session: its next run, or the question's reminder or expiry. A
   * failure (a full disk, a broken store) is logged and the assignment tried again in a minute:
   * its wake is used up, and nothing else would wake it.
   */
  async runWake(wake: Wake, ctx: LaneTaskContext): Promise<void> {
    try {
      await this.#wake(wake, ctx);
    } catch (err) {
      this.#log.error(
        { err, sessionKey: wake.sessionKey },
        "assignment run failed; trying again in a minute",
      );
      const a = await this.#d.store.assignments.bySession(wake.sessionKey).catch(() => undefined);
      const now = this.#d.clock.now();
      if (a) await queueRun(this.#d.store, a, now + RETRY_MS, "the last run failed", now).catch(() => {});
    }
  }

  async #wake(wake: Wake, ctx: LaneTaskContext): Promise<void> {
    const { store, clock } = this.#d;
    let a = await store.assignments.bySession(wake.sessionKey);
    if (!a || !isOpen(a)) return;
    if (a.state === "requires_action") {
      const resumed = await this.#owner.questionDue(a);
      if (!resumed) return;
      a = resumed;
    }
    if (this.#d.usage?.backgroundPaused()) {
      const reason = "paused: the daily spend cap (limits.dailySpendUsd) is reached";
      await store.assignments.setState(a.id, "sleeping", reason, clock.now(), {
        from: ["active", "sleeping"],
      });
      await queueRun(store, a, clock.now() + SPEND_CAP_WAIT_MS, reason, clock.now());
      return;
    }
    if (
      a.state === "sleeping" &&
      !(await store.assignments.setState(a.id, "active", null, clock.now(), { from: ["sleeping"] }))
    )
      return;
    await this.#run({ ...a, state: "active" }, ctx);
  }

  /** One run: fresh from the handoff, or resumed with the owner's answer; then the stop decision. */
  async #run(a: Assignment, ctx: LaneTaskContext): Promise<void> {
    const { store, clock } = this.#d;
    const turns = this.#turns;
    if (!turns) throw new Error("assignments: attach() was not called");
    const runNo = a.checkpoint.runs + 1;
    const inputs = await runInputs(a, runNo, { store, clock, files: this.files, checks: this.#checks });
    let live: LiveRun | undefined;
    const source: TurnSource = {
      trigger: "assignment",
      prepare: async (claim): Promise<PreparedTurn> => {
        live = {
          assignment: a,
          runNo,
          runId: claim.runId,
          sessionId: claim.sessionId,
          startedAt: clock.now(),
          nudgesInRow: 0,
          calls: new Set(),
        };
        this.runs.begin(live);
        // Results of helpers an earlier run spawned: recorded before this run's own input.
        await store.subagents.claimResults(
          a.sessionKey,
          claim.sessionId,
          claim.runId,
          claim.lease,
          resultText,
          claim.now,
        );
        // Helpers an earlier run waited on that outran the wait: the run is told which.
        const note = await helperWaitNote(store, a.sessionKey, claim.now);
        await store.assignments.startRun({
          assignmentId: a.id,
          runNo,
          runId: claim.runId,
          startedAt: live.startedAt,
          turns: 0,
          tokens: 0,
          costUsd: 0,
        });
        return {
          trigger: "assignment",
          runTrigger: "assignment",
          inputs: note ? [...inputs, note] : inputs,
          inboxIds: [],
          target: null,
          steer: false,
          interactive: false,
          // MEMORY.md only for an assignment a person started privately: its messages go to that chat.
          chat: { privateChat: a.privateChat, channel: "assignment", chatKind: "background" },
          deliver: () => null,
          ...(this.#registry ? { tools: this.#registry } : {}),
        };
      },
    };
    try {
      await turns.run(a.sessionKey, source, ctx);
    } finally {
      if (live) this.runs.end(live.runId);
    }
    // As committed (read back from the store only when the event was missed).
    const record = live ? (this.#committed.get(live.runId) ?? (await store.runs.get(live.runId))) : undefined;
    if (live) this.#committed.delete(live.runId);
    if (!live || !record) {
      // Not run (its session held elsewhere), not saved, or stopped by shutdown: its wake was
      // used, so another is queued (a run elsewhere or the next start finds it waiting).
      await queueRun(
        store,
        a,
        clock.now() + RETRY_MS,
        "the last run did not finish; trying again",
        clock.now(),
      );
      return;
    }
    const costUsd = record.calls.reduce((sum, call) => sum + call.costUsd, 0);
    await finishRun(live, record, {
      store,
      clock,
      files: this.files,
      owner: this.#owner,
      log: this.#log,
      checks: this.#checks,
      stallThreshold: this.#config.stallThreshold,
      questionExpiryHours: this.#config.questionExpiryHours,
      costUsd,
      helpers: await store.usage.billedTotals(a.sessionKey, "subagent"),
      poke: this.#d.poke,
    });
    // Helpers that ended while this run went on queued a run that finishRun replaced: again.
    if (resultsDue(await store.subagents.listForParent(a.sessionKey)))
      await this.resultsArrived(a.sessionKey);
  }

  /** The registry an assignment's runs are offered (built by buildAgent with runTools()). */
  useRegistry(registry: ToolRegistry): void {
    this.#registry = registry;
  }

  async #save(live: LiveRun): Promise<void> {
    const [a, now] = [live.assignment, this.#d.clock.now()];
    await this.#d.store.assignments.saveWork(a.id, { items: a.items, checkpoint: a.checkpoint }, now);
    // The mirror follows item changes at most every 5 s; every run's end writes it anyway.
    if (now - (this.#mirrored.get(a.id) ?? 0) < 5_000) return;
    this.#mirrored.set(a.id, now);
    await mirror(a, { files: this.files, log: this.#log });
  }

  async #itemDone(live: LiveRun, item: WorkItem): Promise<void> {
    live.assignment.checkpoint.unreported.push(item.title);
    await this.#owner.report(live.assignment);
  }
}
