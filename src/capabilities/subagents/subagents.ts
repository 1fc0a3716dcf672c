/**
 * Owns the sub-agents of one gateway: spawning a child (a row, then a lane task of its session at
 * `normal` priority, below a person and above cron), waking a parent when its results are in
 * (every child its run spawned has ended, or every child it waits on, or the wait's deadline),
 * stopping a chat's children, and recovery at start-up (children run again, results delivered,
 * children of a vanished parent cancelled).
 */
import type { Config } from "../../config/schema.js";
import type { GatewayEvents } from "../../gateway/events.js";
import type { LaneQueue } from "../../gateway/lanes/lane-queue.js";
import { LaneAbortedError } from "../../gateway/lanes/errors.js";
import type { TurnRunner } from "../../gateway/turn-runner.js";
import { RUN_ONLY_TOOLS } from "../../harness/assignments/assignment-tools.js";
import type { Subagent, SubagentEnd } from "../../store/repos/subagent-repo.js";
import { SILENT_DELIVERY } from "../../store/reasons.js";
import type { Store } from "../../store/types.js";
import type { Clock, TimerHandle } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { SubagentSettings } from "./settings.js";
import { endOf, waitTimedOutText } from "./subagent-text.js";
import { subagentTurn } from "./subagent-turn.js";

/** What the sub-agents need. */
export interface SubagentsDeps {
  config: Config;
  store: Store;
  lanes: LaneQueue;
  clock: Clock;
  logger: Logger;
  workspaceDir: string;
  /**
   * An assignment's session has results: its own runner claims them in its next run (true), or
   * the session is no assignment's (false: a subagent turn wakes it).
   */
  assignmentResults?(sessionKey: string): Promise<boolean>;
  /**
   * Run `runId` called wait_agents until `until` (epoch ms): when it is an assignment's run, its
   * runner sleeps until then instead of running again at once (its helpers' results wake it sooner).
   */
  assignmentWait?(runId: string, until: number): void;
  /** An assignment's session: its runner wakes it, at a wait's deadline too (its run sleeps until then). */
  ownedByAssignment?(sessionKey: string): boolean;
}

/** The tools a child never gets: its parent's assignment and scheduling are not its own. */
const NEVER_FOR_CHILDREN: ReadonlySet<string> = new Set([
  ...RUN_ONLY_TOOLS,
  "task_start",
  "heartbeat_ok",
  "cron_add",
  "cron_remove",
  "schedule_wake",
  "cancel_wake",
]);

/** The tools only a child below the depth limit gets. */
export const SPAWN_TOOLS: ReadonlySet<string> = new Set(["spawn_agent", "wait_agents"]);

/** Ended: its result is final. */
export function ended(c: Pick<Subagent, "state">): boolean {
  return c.state === "done" || c.state === "failed" || c.state === "cancelled";
}

/** Owns the gateway's sub-agents (see the file header). */
export class Subagents {
  readonly settings: SubagentSettings;
  /** `agent:<agentId>:sub:`: the prefix of every child's session key. */
  readonly childPrefix: string;
  readonly #d: SubagentsDeps;
  readonly #log: Logger;
  #turns: TurnRunner | undefined;
  /** Runs that called wait_agents: they end (yield) before their next model call. */
  readonly #waiting = new Set<string>();
  /** wait_agents deadlines, by parent session. */
  readonly #timers = new Map<string, TimerHandle>();
  #stopped = false;

  constructor(deps: SubagentsDeps) {
    this.#d = deps;
    this.settings = deps.config.subagents;
    this.childPrefix = `agent:${deps.config.agent.id}:sub:`;
    this.#log = deps.logger.child({ name: "subagents" });
  }

  get store(): Store {
    return this.#d.store;
  }

  get clock(): Clock {
    return this.#d.clock;
  }

  /** The model refs a child may name: the configured chain. */
  get chain(): string[] {
    return [this.#d.config.agent.model, ...this.#d.config.agent.fallbacks];
  }

  /** The turn runner and the event bus: a child's commit may wake its parent. */
  attach(turns: TurnRunner, events: GatewayEvents): void {
    this.#turns = turns;
    events.on((e) => {
      if (e.type !== "turn_committed" || !e.sessionKey.startsWith(this.childPrefix)) return;
      this.#afterChildTurn(e.sessionKey).catch((err: unknown) =>
        this.#log.error({ err, sessionKey: e.sessionKey }, "could not look at a helper's end"),
      );
    });
  }

  /** The depth of a session: 0 for a top-level one, its row's depth for a child. */
  async depthOf(sessionKey: string): Promise<number> {
    if (!sessionKey.startsWith(this.childPrefix)) return 0;
    return (await this.#d.store.subagents.byChildSession(sessionKey))?.depth ?? 0;
  }

  /** The tools a child is given of what it asked for (never the parent's assignment or schedule tools). */
  childTools(asked: readonly string[], depth: number): string[] {
    return asked.filter(
      (name) => !NEVER_FOR_CHILDREN.has(name) && (!SPAWN_TOOLS.has(name) || depth < this.settings.maxDepth),
    );
  }

  /** Queues a child's run in its own lane (`normal`: after a person, before cron). */
  run(child: Pick<Subagent, "childSessionKey">): void {
    this.#enqueue(child.childSessionKey);
  }

  /** Marks `runId` to end before its next model call (wait_agents), and sets the wait's deadline. */
  wait(parentSessionKey: string, runId: string, timeoutMs: number): void {
    this.#waiting.add(runId);
    const until = this.#d.clock.now() + timeoutMs;
    this.#d.assignmentWait?.(runId, until);
    this.#arm(parentSessionKey, until);
  }

  /** Whether `runId` asked to wait (the yieldBefore hook); forgets it. */
  takeWaiting(runId: string): boolean {
    return this.#waiting.delete(runId);
  }

  /**
   * Cancels a session's queued and running children (and theirs), stopping the running turns;
   * their results are not delivered. Returns how many were stopped.
   */
  async stopChildren(parentSessionKey: string, reason = "stopped by /stop"): Promise<number> {
    let stopped = 0;
    for (const c of await this.#d.store.subagents.listForParent(parentSessionKey)) {
      if (ended(c)) continue;
      stopped += await this.stopChild(c, reason);
    }
    return stopped;
  }

  /** Cancels one child (and its children) and stops its running turn; 1 when it was active. */
  async stopChild(child: Subagent, reason: string): Promise<number> {
    const nested = await this.stopChildren(child.childSessionKey, reason);
    const cancelled = await this.#d.store.subagents.cancel(child.id, reason, this.#d.clock.now(), {
      silent: true,
    });
    this.#d.lanes.abortRunning(child.childSessionKey, "user_stop");
    return nested + (cancelled ? 1 : 0);
  }

  /** A child's end from its last turn (see endOf). */
  end(child: Subagent, answer: string | null, error: string | null): Promise<SubagentEnd> {
    return endOf(child, answer, error, {
      workspaceDir: this.#d.workspaceDir,
      maxChars: this.settings.maxResultChars,
    });
  }

  /**
   * After a restart: children that were queued or running run again (a child whose parent
   * session is gone is cancelled), parents with results not delivered are woken, and the
   * deadlines of waits still open are armed again.
   */
  async recover(): Promise<void> {
    const { store, clock } = this.#d;
    for (const c of await store.subagents.listActive()) {
      const parentKnown = (await store.sessions.get(c.parentSessionKey)) !== undefined;
      if (!parentKnown) {
        await store.subagents.cancel(c.id, "its parent session is gone", clock.now(), { silent: true });
        this.#log.warn(
          { id: c.id, parent: c.parentSessionKey },
          "helper cancelled: its parent session is gone",
        );
        continue;
      }
      if (c.waitDeadline !== null) this.#arm(c.parentSessionKey, c.waitDeadline);
      this.#enqueue(c.childSessionKey);
    }
    for (const parent of await store.subagents.parentsWithResults())
      if (await this.#resultsDue(parent)) await this.#wakeParent(parent);
  }

  /**
   * Whether a parent's undelivered results are due now: some result's spawning run has no child
   * still active (else that child's end wakes the parent, with its whole batch).
   */
  async #resultsDue(parentSessionKey: string): Promise<boolean> {
    const { store } = this.#d;
    const rows = await store.subagents.listForParent(parentSessionKey);
    const busy = new Set(rows.filter((c) => !ended(c)).map((c) => c.parentRunId));
    for (const c of rows) {
      if (!ended(c) || busy.has(c.parentRunId) || c.deliveredRunId === SILENT_DELIVERY) continue;
      if (c.deliveredRunId === null || !(await store.runs.get(c.deliveredRunId))) return true;
    }
    return false;
  }

  /** Stops the wait timers; nothing new is started. */
  quiesce(): void {
    this.#stopped = true;
    for (const t of this.#timers.values()) this.#d.clock.clearTimeout(t);
    this.#timers.clear();
  }

  /** A child's turn committed: when it ended, its parent may be due a wake. */
  async #afterChildTurn(childSessionKey: string): Promise<void> {
    const check = await this.#d.store.subagents.endCheck(childSessionKey);
    if (!check) return;
    // A helper that failed (an answer waits for its own helpers) takes its helpers with it.
    if (check.openChildren > 0) await this.stopChildren(childSessionKey, "the helper that started it ended");
    if (check.batchDone || check.waitDone) await this.#wakeParent(check.parentSessionKey);
  }

  /**
   * Wakes the parent at `deadline` if a child it waits on is still running then (not an
   * assignment: its run sleeps until the deadline, and its runner wakes it).
   */
  #arm(parentSessionKey: string, deadline: number): void {
    if (this.#stopped || this.#d.ownedByAssignment?.(parentSessionKey)) return;
    const { clock, store } = this.#d;
    const old = this.#timers.get(parentSessionKey);
    if (old) clock.clearTimeout(old);
    const fire = async (): Promise<void> => {
      this.#timers.delete(parentSessionKey);
      const running = (await store.subagents.listForParent(parentSessionKey)).filter(
        (c) => c.waitDeadline !== null && !ended(c),
      );
      if (running.length === 0) return; // every awaited child ended: its end woke the parent
      this.#enqueue(parentSessionKey, waitTimedOutText(running));
    };
    this.#timers.set(
      parentSessionKey,
      clock.setTimeout(
        () => {
          fire().catch((err: unknown) => this.#log.error({ err }, "could not wake a waiting parent"));
        },
        Math.max(0, deadline - clock.now()),
      ),
    );
  }

  /** Wakes a parent with its results: an assignment through its runner, any other session by a turn. */
  async #wakeParent(parentSessionKey: string): Promise<void> {
    if (await this.#d.assignmentResults?.(parentSessionKey)) return;
    this.#enqueue(parentSessionKey);
  }

  /** A lane task for the session's next sub-agent turn (a child's run or a parent's wake). */
  #enqueue(sessionKey: string, reason?: string): void {
    const turns = this.#turns;
    if (!turns || this.#stopped) return;
    const source = subagentTurn({
      childPrefix: this.childPrefix,
      toolsOf: (c) => this.childTools(c.tools, c.depth),
      maxToolCallsPerRun: this.settings.maxToolCallsPerRun,
      end: (c, answer, error) => this.end(c, answer, error),
      reason,
    });
    const handle = this.#d.lanes.enqueue({
      sessionKey,
      priority: "normal",
      origin: "subagent",
      run: (ctx) => turns.run(sessionKey, source, ctx),
    });
    handle.done.catch((err: unknown) => {
      if (err instanceof LaneAbortedError) return; // shutdown or /stop: a restart or nothing redoes it
      this.#log.error({ err, sessionKey }, "a helper's turn crashed");
    });
  }
}
