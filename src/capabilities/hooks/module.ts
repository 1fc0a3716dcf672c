/**
 * The `hooks` capability: the programs configured under `hooks` run at fixed points of every
 * turn (command-hooks.ts says what each verdict does), each run counted and timed in /metrics
 * and its last outcome kept for `switchyard hooks list` (hook-outcomes.ts). A command that cannot
 * run is a ConfigError at start naming `hooks.<event>[i].command`. With no entries it adds no
 * TurnHooks at all (a turn costs what it did without hooks); it still records the built-in
 * command guard's verdicts, which the exec and MCP modules report through `guard`.
 */
import type { CommandGuardObserver } from "../../harness/tools/command-guard.js";
import { CommandRunner } from "../../harness/tools/exec/command-runner.js";
import { ConfigError } from "../../util/config-error.js";
import type { AssignmentsCapability } from "../assignments/module.js";
import type { Capability, CapabilityModule } from "../types.js";
import { CommandHooks } from "./command-hooks.js";
import { COMMAND_GUARD_COMMAND, COMMAND_GUARD_KEY, HookOutcomes, hookMetrics } from "./hook-outcomes.js";
import { HookRunner } from "./hook-runner.js";
import { checkHookCommands } from "./settings.js";

/** The built hooks capability: what the exec and MCP modules report the command guard to. */
export interface HooksCapability extends Capability {
  /** Records a verdict of the built-in command guard (the first beforeToolCall row). */
  readonly guard: CommandGuardObserver;
  /** The configured hooks (tests reach the detached afterReply runs through it). */
  readonly configured: CommandHooks;
}

/** The hooks capability module (always built: the command guard's row needs it). */
export const hooksModule: CapabilityModule<HooksCapability> = {
  name: "hooks",
  async create({ config, env, home, workspaceDir, store, metrics, clock, logger, capability }) {
    const settings = config.hooks;
    const problems = await checkHookCommands(settings, workspaceDir, env);
    if (problems.length > 0) throw new ConfigError(undefined, problems);
    const log = logger.child({ name: "hooks" });
    const m = hookMetrics();
    metrics.add(m.runs);
    metrics.add(m.duration);
    const outcomes = new HookOutcomes({ home, metrics: m, clock, logger: log });
    // Its own runner: stop ends a hook still running (a detached afterReply one included).
    const processes = new CommandRunner();
    const runner = new HookRunner({
      workspaceDir,
      env,
      passEnv: config.tools.exec.env,
      commands: processes,
      clock,
    });
    const commands = new CommandHooks({
      settings,
      runner,
      outcomes,
      logger: log,
      now: () => clock.now(),
      messagesOf: async (runId) =>
        (await store.inbox.listUnfinished())
          .filter((r) => r.runId === runId && r.state === "running")
          .map((r) => r.message.text),
      // The same counts the JIT rules and the environment block read (finished of all).
      workItemsOf: (runId) => {
        const items = capability<AssignmentsCapability>("assignments")?.tasks.runInfo(runId)?.workItems();
        return items && { done: items.done, total: items.total };
      },
    });
    const guard: CommandGuardObserver = (verdict, durationMs) =>
      outcomes.record("beforeToolCall", COMMAND_GUARD_KEY, {
        command: COMMAND_GUARD_COMMAND,
        verdict: verdict.type,
        at: clock.now(),
        durationMs,
        ...(verdict.type === "block" && { reason: `${verdict.rule}: ${verdict.reason}` }),
      });
    return {
      guard,
      configured: commands,
      // No entries: no TurnHooks, so composing the turn's hooks costs what it did before.
      hooks: commands.any ? [commands.hooks()] : [],
      attach: ({ events }) => {
        if (!settings.afterReply.some((h) => h.async)) return;
        events.on((e) => {
          // Detached: delivery never waits (committed() catches its own failures).
          if (e.type === "turn_committed") void commands.committed(e.run.runId, e.state === "answered");
          else if (e.type === "turn_ended") commands.ended(e.sessionKey);
        });
      },
      stop: async () => {
        await processes.killAll();
        await outcomes.flush();
      },
    };
  },
};
