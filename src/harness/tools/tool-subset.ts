/**
 * A turn's tools narrowed to a set of names: only those are offered (specs, the environment
 * block's decisions) and a call to any other is refused with `why` before the tools below see
 * it. A sub-agent's turns use it: a child gets the intersection of its parent's offered tools and
 * what the spawn asked for.
 */
import type { TurnTools } from "./turn-tools.js";
import type { ToolSpec } from "../providers/types.js";
import type { ExecuteOptions, ToolRegistry, ToolResult } from "./registry.js";
import type { ToolContext } from "./types.js";

/** Owns one turn's narrowed view of its tools. */
export class ToolSubset implements TurnTools {
  readonly #inner: TurnTools;
  readonly #allowed: ReadonlySet<string>;
  readonly #why: string;

  /** `why`: one phrase, e.g. "not given to this helper by its parent". */
  constructor(inner: TurnTools, allowed: Iterable<string>, why: string) {
    this.#inner = inner;
    this.#allowed = new Set(allowed);
    this.#why = why;
  }

  prepare(ctx: Pick<ToolContext, "replyTarget" | "asker">, signal: AbortSignal): Promise<void> {
    return this.#inner.prepare(ctx, signal);
  }

  specs(ctx?: Pick<ToolContext, "replyTarget" | "asker">): ToolSpec[] {
    return this.#inner.specs(ctx).filter((s) => this.#allowed.has(s.name));
  }

  decisions(ctx: Pick<ToolContext, "replyTarget" | "asker">): ReturnType<ToolRegistry["decisions"]> {
    return this.#inner
      .decisions(ctx)
      .map((d) =>
        d.allowed && !this.#allowed.has(d.tool.name)
          ? { tool: d.tool, allowed: false, reason: this.#why }
          : d,
      );
  }

  async execute(
    name: string,
    argumentsJson: string,
    ctx: ToolContext,
    options?: ExecuteOptions,
  ): Promise<ToolResult> {
    if (!this.#allowed.has(name))
      return {
        content: `error (denied): ${name} is not available here: ${this.#why}.`,
        isError: true,
        code: "denied",
      };
    return this.#inner.execute(name, argumentsJson, ctx, options);
  }
}
