/**
 * A turn's tools as its session's mode allows them. In plan mode the model is offered only the
 * tools plan-mode.ts names (the stable prompt's tool list and each request's tools come from
 * `specs`), and `execute` refuses any other call — write_file to any path but the plan file
 * included — with a result naming the mode, before the registry sees it. In the other modes the
 * registry is used as it is.
 */
import type { SessionMode } from "../../store/repos/session-repo.js";
import type { ToolSpec } from "../providers/types.js";
import type { ExecuteOptions, ToolRegistry, ToolResult } from "../tools/registry.js";
import { ToolSubset } from "../tools/tool-subset.js";
import type { TurnTools } from "../tools/turn-tools.js";
import type { ToolContext } from "../tools/types.js";
import {
  PLAN_WRITE_TOOL,
  isPlanFileWrite,
  offeredInPlanMode,
  planFilePath,
  planModeRefusal,
} from "./plan-mode.js";

export type { TurnTools } from "../tools/turn-tools.js";

/** The session a turn's tools are restricted for. */
export interface ModeScope {
  mode: SessionMode;
  sessionKey: string;
  workspaceDir: string;
}

/** `registry` itself outside plan mode; in plan mode, a PlanModeTools over it. */
export function toolsForMode(registry: ToolRegistry, scope: ModeScope): TurnTools {
  return scope.mode === "plan" ? new PlanModeTools(registry, scope) : registry;
}

/** Owns a plan-mode turn's view of its registry: fewer tools offered, the rest refused. */
export class PlanModeTools implements TurnTools {
  readonly #registry: ToolRegistry;
  readonly #scope: ModeScope;
  /** The registered tools plan mode offers (a tool source's are never among them). */
  readonly #allowed: ReadonlySet<string>;
  readonly #planPath: string;
  /** What is offered (specs, decisions): the registry narrowed to `#allowed`. */
  readonly #offered: ToolSubset;

  constructor(registry: ToolRegistry, scope: ModeScope) {
    this.#registry = registry;
    this.#scope = scope;
    this.#planPath = planFilePath(scope.sessionKey);
    this.#allowed = new Set(
      registry
        .list()
        .filter((t) => offeredInPlanMode(t.name, t.groups))
        .map((t) => t.name),
    );
    this.#offered = new ToolSubset(registry, this.#allowed, "plan mode: /execute leaves it");
  }

  /** Nothing a tool source offers runs in plan mode: none is started. */
  async prepare(): Promise<void> {}

  /** The registry's specs for this context that plan mode offers (the same frozen objects). */
  specs(ctx?: Pick<ToolContext, "replyTarget" | "asker">): ToolSpec[] {
    return this.#offered.specs(ctx);
  }

  /** The registry's decisions, with the tools plan mode withholds denied by it (the environment block). */
  decisions(ctx: Pick<ToolContext, "replyTarget" | "asker">): ReturnType<ToolRegistry["decisions"]> {
    return this.#offered.decisions(ctx);
  }

  /** Refuses a call plan mode does not allow (the result names the mode); runs the rest. */
  async execute(
    name: string,
    argumentsJson: string,
    ctx: ToolContext,
    options?: ExecuteOptions,
  ): Promise<ToolResult> {
    if (!this.#allowed.has(name)) return refused(planModeRefusal(name, this.#scope.sessionKey));
    if (name === PLAN_WRITE_TOOL) {
      const target = pathArgument(argumentsJson);
      // No string path: the registry refuses the arguments and runs nothing.
      if (target !== undefined && !isPlanFileWrite(this.#scope.workspaceDir, target, this.#planPath))
        return refused(planModeRefusal(`write_file to ${target}`, this.#scope.sessionKey));
    }
    return this.#registry.execute(name, argumentsJson, ctx, options);
  }
}

/** The `path` argument of a call, when its arguments are a JSON object with a string path. */
function pathArgument(argumentsJson: string): string | undefined {
  try {
    const args: unknown = JSON.parse(argumentsJson);
    if (typeof args !== "object" || args === null) return undefined;
    const p = (args as Record<string, unknown>).path;
    return typeof p === "string" ? p : undefined;
  } catch {
    return undefined;
  }
}

function refused(message: string): ToolResult {
  return { content: `error (denied): ${message}`, isError: true, code: "denied" };
}
